import fc from 'fast-check';
import { orderedTimeText, pooledRandomText, RandomIdGenerator } from './id-generator.port';

describe('RandomIdGenerator', () => {
  afterEach(() => jest.useRealTimers());

  it('gives short ids of the time and 9 random bytes in base64url, all different, across refills of its pool', () => {
    const ids = new RandomIdGenerator();
    const before = Date.now();
    const many = Array.from({ length: 1000 }, () => ids.short());
    const after = Date.now();
    expect(many.every((id) => /^[A-Za-z0-9_-]{19}$/.test(id))).toBe(true);
    expect(new Set(many).size).toBe(many.length);
    // The first 7 characters are the time it was drawn, the other 12 random.
    for (const id of [many[0], many[999]]) {
      expect(id.slice(0, 7) >= orderedTimeText(before) && id.slice(0, 7) <= orderedTimeText(after)).toBe(true);
    }
    expect(new Set(many.map((id) => id.slice(7))).size).toBe(many.length);
    // Two generators draw their own bytes.
    const other = new RandomIdGenerator();
    expect(many).not.toContain(other.short());
  });

  it('orders ids drawn in later milliseconds after earlier ones, in byte order (as SQLite and MongoDB compare)', () => {
    jest.useFakeTimers({ now: new Date('2026-11-23T06:00:00.000Z') });
    const ids = new RandomIdGenerator();
    const drawn: string[] = [];
    for (const step of [0, 1, 1, 62, 63, 64, 4095, 4096, 86_400_000, 1]) {
      jest.advanceTimersByTime(step);
      drawn.push(ids.short());
    }
    const bytes = (id: string) => Buffer.from(id, 'latin1');
    for (let i = 1; i < drawn.length; i++) {
      if (drawn[i].slice(0, 7) === drawn[i - 1].slice(0, 7)) continue;
      expect(Buffer.compare(bytes(drawn[i - 1]), bytes(drawn[i]))).toBe(-1);
    }
    // Within one millisecond the time part is the same and the random part tells them apart.
    expect(drawn[0].slice(0, 7)).toBe(orderedTimeText(Date.parse('2026-11-23T06:00:00.000Z')));
  });

  it('still gives ids when the clock is outside what the time part holds (before 1970, after 2109)', () => {
    const ids = new RandomIdGenerator();
    for (const [now, time] of [
      [-86_400_000, '-------'],
      [2 ** 42 + 86_400_000, 'zzzzzzz'],
    ] as const) {
      jest.useFakeTimers({ now });
      const [a, b] = [ids.short(), ids.short()];
      expect([a.slice(0, 7), b.slice(0, 7)]).toEqual([time, time]);
      expect(a).not.toBe(b);
      expect(a).toMatch(/^[A-Za-z0-9_-]{19}$/);
    }
  });
});

describe('orderedTimeText', () => {
  it('sorts in byte order as the numbers do, in 7 base64url characters', () => {
    const max = 2 ** 42 - 1;
    fc.assert(
      fc.property(fc.integer({ min: 0, max }), fc.integer({ min: 0, max }), (a, b) => {
        const [ta, tb] = [orderedTimeText(a), orderedTimeText(b)];
        expect(ta).toMatch(/^[A-Za-z0-9_-]{7}$/);
        expect(Math.sign(Buffer.compare(Buffer.from(ta), Buffer.from(tb)))).toBe(Math.sign(a - b));
      }),
      { numRuns: 2000 },
    );
    expect(orderedTimeText(0)).toBe('-------');
    expect(orderedTimeText(max)).toBe('zzzzzzz');
    // From now until 2050 it starts with a capital letter, never with '-' (an option on a command line).
    for (const year of [2026, 2049]) expect(orderedTimeText(Date.UTC(year, 0, 1))).toMatch(/^[A-Z]/);
  });

  it('refuses what 42 bits cannot hold (from 2109 on)', () => {
    for (const bad of [-1, 2 ** 42, 1.5, Number.NaN]) expect(() => orderedTimeText(bad)).toThrow(RangeError);
  });
});

describe('pooledRandomText', () => {
  it('gives texts of the asked number of random bytes, all different, across refills of its pool', () => {
    const next = pooledRandomText(18);
    const many = Array.from({ length: 1000 }, () => next());
    expect(many.every((text) => /^[A-Za-z0-9_-]{24}$/.test(text))).toBe(true);
    expect(new Set(many).size).toBe(many.length);
  });
});
