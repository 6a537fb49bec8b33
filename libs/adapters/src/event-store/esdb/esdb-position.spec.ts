import { decodeEsdbPosition, encodeEsdbPosition } from './esdb-event-store.adapter';

const MAX_U64 = 2n ** 64n - 1n;

describe('EventStoreDB log positions as strings', () => {
  it('writes commit and prepare as two 20-digit numbers', () => {
    expect(encodeEsdbPosition({ commit: 1234n, prepare: 1200n })).toBe('00000000000000001234:00000000000000001200');
    expect(encodeEsdbPosition({ commit: 0n, prepare: 0n })).toBe(`${'0'.repeat(20)}:${'0'.repeat(20)}`);
    expect(encodeEsdbPosition({ commit: MAX_U64, prepare: MAX_U64 })).toBe('18446744073709551615:18446744073709551615');
  });

  it('reads back exactly what it wrote, beyond the safe integer range', () => {
    for (const position of [
      { commit: 0n, prepare: 0n },
      { commit: 9n, prepare: 10n },
      { commit: BigInt(Number.MAX_SAFE_INTEGER) + 2n, prepare: BigInt(Number.MAX_SAFE_INTEGER) + 1n },
      { commit: MAX_U64, prepare: MAX_U64 - 1n },
    ]) {
      expect(decodeEsdbPosition(encodeEsdbPosition(position))).toEqual(position);
    }
  });

  it('orders as strings exactly as the log orders (commit first, then prepare)', () => {
    const positions = [
      { commit: 9n, prepare: 9n },
      { commit: 10n, prepare: 1n },
      { commit: 10n, prepare: 2n },
      { commit: 99n, prepare: 100n },
      { commit: 100n, prepare: 0n },
      { commit: 2n ** 53n + 1n, prepare: 0n },
      { commit: MAX_U64, prepare: 0n },
    ];
    const encoded = positions.map(encodeEsdbPosition);
    expect(new Set(encoded.map((p) => p.length))).toEqual(new Set([41]));
    expect([...encoded].reverse().sort()).toEqual(encoded);
  });

  it('refuses what is not one of its positions', () => {
    for (const bad of ['', '00000000000000000001', '1:2', `${'0'.repeat(20)}:${'0'.repeat(19)}x`, ` ${'0'.repeat(20)}:${'0'.repeat(20)}`]) {
      expect(() => decodeEsdbPosition(bad)).toThrow(/not an EventStoreDB log position/);
    }
    expect(() => encodeEsdbPosition({ commit: -1n, prepare: 0n })).toThrow(/negative/);
  });
});
