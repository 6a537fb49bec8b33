import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { freezeJson } from './json-value';

const isDeeplyFrozen = (value: unknown): boolean =>
  value === null || typeof value !== 'object' || (Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen));

describe('freezeJson', () => {
  it('passes and deep-freezes exactly the values JSON gives back unchanged', () => {
    // Any value fast-check makes up, JSON-safe or not: the verdict must match JSON's own round trip.
    const anything = fc.anything({
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withSparseArray: true,
      withTypedArray: true,
    });
    fc.assert(
      fc.property(anything, (value) => {
        let same: boolean;
        try {
          const text = JSON.stringify(value);
          same = text !== undefined && isDeepStrictEqual(JSON.parse(text), value);
        } catch {
          same = false;
        }
        const verdict = freezeJson(value);
        expect(verdict).toBe(same);
        if (verdict) expect(isDeeplyFrozen(value)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('checks what other code froze like anything else', () => {
    const deepFreeze = (value: unknown): unknown => {
      if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
        Object.freeze(value);
        Object.values(value).forEach(deepFreeze);
      }
      return value;
    };
    fc.assert(
      fc.property(fc.anything({ withDate: true, withMap: true, withNullPrototype: true, withSparseArray: true }), (value) => {
        const text = JSON.stringify(value);
        const same = text !== undefined && isDeepStrictEqual(JSON.parse(text), value);
        expect(freezeJson(deepFreeze(value))).toBe(same);
      }),
      { numRuns: 1000 },
    );
    expect(freezeJson(Object.freeze({ at: new Date(0) }))).toBe(false);
    expect(freezeJson(Object.freeze([undefined]))).toBe(false);
    class Items extends Array<number> {}
    expect(freezeJson(Items.from([1, 2]))).toBe(false);
  });

  it('passes any JSON.parse result', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => expect(freezeJson(JSON.parse(JSON.stringify(value)))).toBe(true)));
  });

  it('refuses what JSON would change, at any depth', () => {
    for (const odd of [
      undefined,
      new Date(0),
      Number.NaN,
      Infinity,
      -0,
      () => 1,
      1n,
      Symbol('s'),
      new Map(),
      /x/,
      // eslint-disable-next-line no-sparse-arrays -- a sparse array is the case under test
      [1, , 3],
      [undefined],
      Object.create(null),
    ]) {
      expect(freezeJson({ a: { b: [1, { c: odd }] } })).toBe(false);
    }
    class Point {
      constructor(readonly x: number) {}
    }
    expect(freezeJson({ at: new Point(1) })).toBe(false);
  });

  it('leaves the failing branch unfrozen, so its owner can still change it', () => {
    const event = { ok: { n: 1 }, bad: { when: new Date(0) } };
    expect(freezeJson(event)).toBe(false);
    expect(Object.isFrozen(event)).toBe(false);
    expect(Object.isFrozen(event.bad)).toBe(false);
  });

  it('does not look into large parts it passed before: a new value reusing them is checked for what changed', () => {
    let reads = 0;
    // Large by its own members (a part it remembered counts as one member of its owner).
    const deal = {
      ...Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`term${i}`, i])),
      get title() {
        reads++;
        return 'x';
      },
    };
    const before = { deal, sold: 1 };
    expect(freezeJson(before)).toBe(true);
    expect(reads).toBe(1);
    const after = { ...before, sold: 2 };
    expect(freezeJson(after)).toBe(true);
    expect(reads).toBe(1);
    expect(Object.isFrozen(after) && after.deal === deal).toBe(true);
  });

  it('looks through small parts and the values it was given again, which costs less than remembering them', () => {
    let reads = 0;
    const small = {
      get title() {
        reads++;
        return 'x';
      },
    };
    const event = { small };
    expect(freezeJson(event)).toBe(true);
    expect(freezeJson({ small, n: 1 })).toBe(true);
    expect(freezeJson(event)).toBe(true);
    expect(reads).toBe(3);
  });

  it("gives JSON's verdict for values made of parts it passed before", () => {
    const json = (value: unknown) => {
      const text = JSON.stringify(value);
      return text !== undefined && isDeepStrictEqual(JSON.parse(text), value);
    };
    const passed = fc
      .array(fc.jsonValue(), { minLength: 1, maxLength: 5 })
      .map((parts) => parts.map((p) => JSON.parse(JSON.stringify(p)) as unknown));
    const extra = fc.anything({ withDate: true, withMap: true, withNullPrototype: true, withSparseArray: true });
    fc.assert(
      fc.property(passed, fc.array(extra, { maxLength: 3 }), (parts, others) => {
        for (const part of parts) expect(freezeJson(part)).toBe(true);
        const value = { parts: [...parts], nested: { again: parts[0], others } };
        expect(freezeJson(value)).toBe(json(value));
      }),
      { numRuns: 1000 },
    );
  });
});
