import { DEPTH_SLICE, MAX_JSON_DEPTH, nestsDeeperThan, nestsDeeperThanInSlices } from './json-depth';

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

describe('nestsDeeperThanInSlices (a large body)', () => {
  /** A text of more than two slices whose last characters are `tail`, its strings holding brackets and escapes up to the slices' edges. */
  const large = (tail: string) => {
    const filler = JSON.stringify('[{\\"'.repeat(Math.ceil((2 * DEPTH_SLICE) / 5)));
    return `[${filler},${tail}]`;
  };

  it('answers as nestsDeeperThan does, an escape or a string cut by the edge of a slice included', async () => {
    for (const shift of [0, 1, 2, 3]) {
      const shallow = large(' '.repeat(shift) + nested(MAX_JSON_DEPTH - 1));
      const deep = large(' '.repeat(shift) + nested(MAX_JSON_DEPTH));
      expect(await nestsDeeperThanInSlices(shallow)).toBe(nestsDeeperThan(shallow));
      expect(await nestsDeeperThanInSlices(deep)).toBe(true);
      expect(nestsDeeperThan(deep)).toBe(true);
    }
    const edge = `["${'a'.repeat(DEPTH_SLICE - 3)}\\"${'['.repeat(MAX_JSON_DEPTH + 1)}"]`;
    expect(await nestsDeeperThanInSlices(edge)).toBe(false);
  });

  it('lets the event loop turn between its slices', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    const reading = nestsDeeperThanInSlices(large('0'));
    expect(turned).toBe(false);
    expect(await reading).toBe(false);
    expect(turned).toBe(true);
  });
});
