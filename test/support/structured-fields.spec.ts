import { rateLimitFields } from './rate-limit-fields';
import { parseList, StructuredFieldError } from './structured-fields';

const plain = (field: string) =>
  parseList(field).map(({ value, params }) => [value.value, Object.fromEntries([...params].map(([k, v]) => [k, v.value]))]);

describe('parseList: RFC 9651 Lists of Items, strictly', () => {
  it('reads string items with parameters, members apart by a comma and optional whitespace', () => {
    expect(plain('"partner";q=600;w=60')).toEqual([['partner', { q: 600, w: 60 }]]);
    expect(plain('"a";q=1, "b";r=0;t=59')).toEqual([
      ['a', { q: 1 }],
      ['b', { r: 0, t: 59 }],
    ]);
    expect(plain('"a";q=1,"b";q=2')).toHaveLength(2);
    expect(plain('"a";q=1 ,\t"b";q=2')).toHaveLength(2);
    expect(plain('  "a"; q=1  ')).toEqual([['a', { q: 1 }]]);
    expect(plain('')).toEqual([]);
  });

  it('tells the types apart: integers, decimals, tokens, booleans; a key alone is true, a key given twice its last value', () => {
    const [item] = parseList('"x";i=-12;d=1.5;t=abc/d:e;b=?0;flag;i=7');
    expect(Object.fromEntries(item.params)).toEqual({
      i: { type: 'integer', value: 7 },
      d: { type: 'decimal', value: 1.5 },
      t: { type: 'token', value: 'abc/d:e' },
      b: { type: 'boolean', value: false },
      flag: { type: 'boolean', value: true },
    });
    expect(parseList('partner;q=1')[0].value).toEqual({ type: 'token', value: 'partner' });
  });

  it('reads escapes in strings: \\" and \\\\ only', () => {
    expect(parseList('"a\\"b\\\\c"')[0].value).toEqual({ type: 'string', value: 'a"b\\c' });
  });

  it.each([
    ['a trailing comma', '"a";q=1,'],
    ['two commas', '"a",,"b"'],
    ['members without a comma', '"a" "b"'],
    ['a space before a parameter', '"a" ;q=1'],
    ['a tab before the value', '\t"a"'],
    ['an uppercase key', '"a";Q=1'],
    ['a key starting with a digit', '"a";1q=1'],
    ['a parameter without a key', '"a";=1'],
    ['a missing value', '"a";q='],
    ['an integer of 16 digits', '"a";q=1234567890123456'],
    ['a decimal ending in its point', '"a";q=1.'],
    ['a decimal with 4 fractional digits', '"a";q=1.2345'],
    ['a decimal with 13 integer digits', '"a";q=1234567890123.5'],
    ['a lone minus', '"a";q=-'],
    ['an unterminated string', '"abc'],
    ['an escape other than \\" or \\\\', '"a\\nb"'],
    ['a control character in a string', '"a\u0001b"'],
    ['a character outside ASCII', '"café"'],
    ['an Inner List', '("a" "b");q=1'],
    ['a Byte Sequence', ':aGVsbG8=:'],
    ['a boolean other than ?0 or ?1', '"a";b=?2'],
  ])('refuses %s', (_what, field) => {
    expect(() => parseList(field)).toThrow(StructuredFieldError);
  });
});

describe('rateLimitFields: RateLimit-Policy and RateLimit as draft-ietf-httpapi-ratelimit-headers says', () => {
  const answer = (policy?: string | string[], limit?: string | string[]) => ({ 'ratelimit-policy': policy, ratelimit: limit });

  it('reads each named policy, with its quota, window, what is left and when more comes', () => {
    expect(rateLimitFields(answer('"partner";q=20;w=60, "user";q=5;w=60', '"partner";r=4;t=37, "user";r=0;t=12'))).toEqual(
      new Map([
        ['partner', { quota: 20, window: 60, remaining: 4, reset: 37 }],
        ['user', { quota: 5, window: 60, remaining: 0, reset: 12 }],
      ]),
    );
    expect(rateLimitFields(answer('"p";q=3', '"p";r=3'))).toEqual(new Map([['p', { quota: 3, remaining: 3 }]]));
    expect(rateLimitFields(answer(['"a";q=1', '"b";q=2'], ['"a";r=1', '"b";r=2']))?.size).toBe(2);
    expect(rateLimitFields({})).toBeNull();
  });

  it.each([
    ['RateLimit-Policy alone', answer('"p";q=1', undefined)],
    ['RateLimit alone', answer(undefined, '"p";r=1')],
    ['empty fields', answer('', '')],
    ['a policy named by a token', answer('p;q=1', 'p;r=1')],
    ['a policy without q', answer('"p";w=60', '"p";r=1')],
    ['a negative q', answer('"p";q=-1', '"p";r=1')],
    ['a decimal q', answer('"p";q=1.0', '"p";r=1')],
    ['a string q', answer('"p";q="1"', '"p";r=1')],
    ['a window of 0 seconds', answer('"p";q=1;w=0', '"p";r=1')],
    ['a limit without r', answer('"p";q=1', '"p";t=1')],
    ['a negative r', answer('"p";q=1', '"p";r=-1')],
    ['a decimal t', answer('"p";q=1', '"p";r=1;t=0.5')],
    ['a policy named twice', answer('"p";q=1, "p";q=2', '"p";r=1')],
    ['a policy RateLimit does not tell', answer('"p";q=1, "u";q=1', '"p";r=1')],
    ['a limit of a policy not told', answer('"p";q=1', '"p";r=1, "u";r=1')],
    ['a malformed list', answer('"p";q=1,', '"p";r=1')],
  ])('refuses %s', (_what, headers) => {
    expect(() => rateLimitFields(headers)).toThrow();
  });
});
