import { pooledRandomText, RandomIdGenerator } from './id-generator.port';

describe('RandomIdGenerator', () => {
  it('gives short ids of 12 random bytes in base64url, all different, across refills of its pool', () => {
    const ids = new RandomIdGenerator();
    const many = Array.from({ length: 1000 }, () => ids.short());
    expect(many.every((id) => /^[A-Za-z0-9_-]{16}$/.test(id))).toBe(true);
    expect(new Set(many).size).toBe(many.length);
    // Two generators draw their own bytes.
    const other = new RandomIdGenerator();
    expect(many).not.toContain(other.short());
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
