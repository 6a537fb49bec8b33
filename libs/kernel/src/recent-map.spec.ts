import fc from 'fast-check';
import { RecentMap } from './recent-map';

describe('RecentMap', () => {
  it('gives back the value last set for a key among the recent ones', () => {
    const map = new RecentMap<string, number>(4);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    expect(map.get('a')).toBe(3);
    expect(map.get('b')).toBe(2);
    expect(map.get('c')).toBeUndefined();
  });

  it('never holds more than its capacity, and always keeps at least the last half of it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 300 }), (capacity, keys) => {
        const map = new RecentMap<number, number>(capacity);
        keys.forEach((key, i) => {
          map.set(key, i);
          expect(map.size).toBeLessThanOrEqual(capacity);
        });
        // The last floor(capacity / 2) distinct keys set are still there, with their last values.
        const last = new Map<number, number>();
        for (let i = keys.length - 1; i >= 0 && last.size < Math.floor(capacity / 2); i--) if (!last.has(keys[i])) last.set(keys[i], i);
        for (const [key, value] of last) expect(map.get(key)).toBe(value);
      }),
    );
  });

  it('keeps a value that is undefined apart from a missing key in the young generation', () => {
    const map = new RecentMap<string, number | undefined>(8);
    map.set('a', 1);
    for (let i = 0; i < 4; i++) map.set(`k${i}`, i); // 'a' is now old
    map.set('a', undefined);
    expect(map.get('a')).toBeUndefined();
  });

  it('refuses a capacity that cannot hold two generations', () => {
    expect(() => new RecentMap(1)).toThrow(RangeError);
  });
});
