import { FIELD_NAME_RULE, isStorableText, malformedTextIn, TEXT_RULE } from './well-formed-text';

const at = (field: string, message = TEXT_RULE) => ({ type: 'invalid', resource: 'request', field, message });
const request = (parts: { params?: unknown; query?: unknown; body?: unknown; headers?: Record<string, string> }) =>
  malformedTextIn({ params: parts.params ?? {}, query: parts.query ?? {}, body: parts.body, headers: parts.headers ?? {} });

describe('text at the edge', () => {
  it('takes well-formed text (pairs, combining marks, U+FFFD) and refuses a lone surrogate or a NUL', () => {
    for (const text of ['', 'Zoë «café» 東京 🎟️', 'cafe\u0301', '\ufffd', 'line\nbreak\ttab']) expect(isStorableText(text)).toBe(true);
    for (const text of ['Ana\ud800', '\udc00x', '\ud83c', 'a\u0000b']) expect(isStorableText(text)).toBe(false);
  });

  it('names each bad field by its path in the body, query and path, never its text', () => {
    const refusal = request({
      params: { user_id: 'u\u0000' },
      query: { q: ['ok', 'x\u0000'] },
      body: { first_name: 'Ana\ud800', partner_data: { note: 'fine', deep: [{ x: '\udfff' }] }, n: 1, b: null },
    });
    expect(refusal?.issues).toEqual([at('user_id'), at('q.1'), at('first_name'), at('partner_data.deep.0.x')]);
    expect(refusal?.message).not.toContain('Ana');
    expect(refusal?.message).not.toContain('\u0000');
  });

  it('names the object holding a bad field name (not the name), and a bad body or kept header by itself', () => {
    expect(request({ body: { partner_data: { ['k\ud800']: 1 } } })?.issues).toEqual([at('partner_data', FIELD_NAME_RULE)]);
    expect(request({ query: { ['\u0000']: 'x' } })?.issues).toEqual([at('query', FIELD_NAME_RULE)]);
    expect(request({ body: 'a\u0000' })?.issues).toEqual([at('body')]);
    expect(request({ headers: { 'x-correlation-id': 'c\u0000' } })?.issues).toEqual([at('x-correlation-id')]);
  });

  it('finds nothing in a request of storable text', () => {
    expect(
      request({ params: { id: 'u-1' }, query: { api_key: 'k' }, body: { items: [{ reference: 'crm-1', email: 'café@x.test' }] } }),
    ).toBeNull();
  });
});
