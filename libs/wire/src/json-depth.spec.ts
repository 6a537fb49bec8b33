import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

describe('nestsDeeperThan', () => {
  it('takes bodies up to the limit and refuses deeper ones, of arrays and objects alike', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    const objects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    expect(nestsDeeperThan(objects(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(objects(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(nested(10_000))).toBe(true);
  });

  it('counts no bracket inside a string, escaped quotes included', () => {
    const inString = JSON.stringify({ text: '['.repeat(500) + '\\"[[[' + '{'.repeat(500) });
    expect(nestsDeeperThan(inString)).toBe(false);
    expect(nestsDeeperThan(`[${JSON.stringify('"\\')},${nested(MAX_JSON_DEPTH)}]`)).toBe(true);
  });

  it('counts depth, not brackets: many siblings are shallow', () => {
    expect(nestsDeeperThan(`[${Array.from({ length: 5000 }, () => '[{}]').join(',')}]`)).toBe(false);
  });
});
