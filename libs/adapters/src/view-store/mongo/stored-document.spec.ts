import { ESCAPED, fromStored, toStored } from './stored-document';

describe('MongoViewStore: documents as MongoDB and FerretDB both store them', () => {
  const doc = (fields: Record<string, unknown>) => ({ _id: 'd', _pos: '1', ...fields });

  it('stores a document holding nothing to escape as it is, the same object', () => {
    const plain = doc({ partnerId: 'p', tags: [], nested: { at: null, list: [{ n: 1 }] }, 'tier%': 'gold' });
    expect(toStored(plain)).toBe(plain);
    expect(fromStored(plain)).toBe(plain);
  });

  it("escapes keys with '.' or a leading '$' and arrays in arrays, marked, and reads them back as written", () => {
    const written = doc({ partnerId: 'p', data: { 'a.b': 1, $x: [[1], [], [[2]]], '%a': ['%2E'], 'x%2E': { '%a': [3] } } });
    const stored = toStored(written);
    expect(stored).toEqual({
      _id: 'd',
      _pos: '1',
      partnerId: 'p',
      data: { 'a%2Eb': 1, '%24x': [{ '%a': [1] }, { '%a': [] }, { '%a': [{ '%a': [2] }] }], '%25a': ['%2E'], 'x%252E': { '%25a': [3] } },
      [ESCAPED]: true,
    });
    expect(JSON.stringify(stored)).not.toMatch(/"\$|\.[^"]*":/);
    expect(fromStored(stored)).toEqual(written);
  });

  it('stores numbers as JSON writes them: NaN and infinities as null, -0 as 0, unmarked', () => {
    const stored = toStored(doc({ a: NaN, b: [Infinity, -Infinity], c: { d: -0 }, e: 1.5 }));
    expect(stored).toEqual(doc({ a: null, b: [null, null], c: { d: 0 }, e: 1.5 }));
    expect(Object.is((stored as unknown as { c: { d: number } }).c.d, 0)).toBe(true);
    expect(ESCAPED in stored).toBe(false);
  });
});
