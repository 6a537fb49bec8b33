import { canonicalJson } from './idempotency-keys';

describe('canonicalJson: what makes two bodies the same request', () => {
  it('orders object keys, at every depth, and leaves arrays in their order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: 'x' } })).toBe(canonicalJson({ a: { c: 'x', d: [2, 1] }, b: 1 }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });

  it('tells apart values JSON tells apart, and no body from an empty one', () => {
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
    expect(canonicalJson(undefined)).not.toBe(canonicalJson({}));
    expect(canonicalJson({ 'a"b': 1 })).toBe('{"a\\"b":1}');
  });
});
