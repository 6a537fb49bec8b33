import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { freezeJson } from './json-value';

const isDeeplyFrozen = (value: unknown): boolean =>
  value === null || typeof value !== 'object' || (Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen));

describe('freezeJson', () => {
  it('passes and deep-freezes exactly the values JSON gives back unchanged', () => {
    // Any value fast-check makes up, JSON-safe or not: the verdict must match JSON's own round trip.
    const anything = fc.anything({
      withBoxedValues: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true, withSparseArray: true, withTypedArray: true,
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

  it('passes any JSON.parse result', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => expect(freezeJson(JSON.parse(JSON.stringify(value)))).toBe(true)));
  });

  it('refuses what JSON would change, at any depth', () => {
    for (const odd of [undefined, new Date(0), Number.NaN, Infinity, -0, () => 1, 1n, Symbol('s'), new Map(), /x/, [1, , 3], [undefined], Object.create(null)]) {
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

  it('takes frozen parts as checked: a new value reusing them is checked for what changed', () => {
    const before = { deal: { title: 'x', prices: [1, 2] }, sold: 1 };
    expect(freezeJson(before)).toBe(true);
    const after = { ...before, sold: 2 };
    expect(freezeJson(after)).toBe(true);
    expect(Object.isFrozen(after) && after.deal === before.deal).toBe(true);
  });
});
