import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import {
  Checkpoint,
  checkpointHash,
  checkpointText,
  eventHash,
  merkleProof,
  merkleRoot,
  STREAM_START,
  streamLink,
  verifyMerkleProof,
} from './seal';

const sha = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
const event = {
  streamId: 'purchase-p1',
  revision: 0,
  id: 'e1',
  type: 'PurchaseReserved',
  data: { a: 1, b: [1, { d: 2, c: 'x' }] },
  metadata: { actor: 'x' },
};
const links = (n: number) => Array.from({ length: n }, (_, i) => sha(Buffer.from(`link ${i}`)));

describe('the seal of the event log', () => {
  it('hashes every field of an event, so that an edit of any one changes it', () => {
    const base = eventHash(event);
    for (const changed of [
      { streamId: 'purchase-p2' },
      { revision: 1 },
      { id: 'e2' },
      { type: 'PurchaseReleased' },
      { data: { a: 2, b: [1, { d: 2, c: 'x' }] } },
      { data: { a: 1, b: [{ d: 2, c: 'x' }, 1] } },
      { metadata: { actor: 'y' } },
      // Fields that run together alike are still told apart.
      { streamId: 'purchase-p1', id: '', type: 'e1PurchaseReserved' },
    ])
      expect(eventHash({ ...event, ...changed }).equals(base)).toBe(false);
    // Its JSON text as read is what is hashed: keys in another order are another text.
    expect(eventHash({ ...event, data: { b: [1, { d: 2, c: 'x' }], a: 1 } }).equals(base)).toBe(false);
  });

  it("chains a stream's events: each link over the one before and the event's own hash", () => {
    const first = streamLink(STREAM_START, eventHash(event));
    expect(first.equals(sha(Buffer.alloc(32), eventHash(event)))).toBe(true);
    const second = streamLink(first, eventHash({ ...event, revision: 1, id: 'e2' }));
    expect(second.equals(streamLink(STREAM_START, eventHash({ ...event, revision: 1, id: 'e2' })))).toBe(false);
  });

  it('gives the RFC 6962 root, and a proof of every link that checks against it, and none of a wrong one', () => {
    const [a, b, c] = links(3);
    const leaf = (x: Buffer) => sha(Buffer.from([0]), x);
    const node = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);
    expect(merkleRoot([a, b, c]).equals(node(node(leaf(a), leaf(b)), leaf(c)))).toBe(true);
    for (let count = 1; count <= 17; count++) {
      const all = links(count);
      const root = merkleRoot(all);
      for (let i = 0; i < count; i++) {
        const proof = merkleProof(all, i);
        expect(verifyMerkleProof(all[i], i, count, proof, root)).toBe(true);
        expect(verifyMerkleProof(sha(all[i]), i, count, proof, root)).toBe(false);
        if (count > 1) expect(verifyMerkleProof(all[i], (i + 1) % count, count, proof, root)).toBe(false);
      }
    }
  });

  it('signs a checkpoint over a line of text a script can rebuild, and names the one before by its hash', () => {
    const first: Checkpoint = {
      number: 1,
      previous: null,
      fromPosition: '1',
      toPosition: '3',
      count: 3,
      root: 'ab'.repeat(32),
      sealedAt: '2026-06-15T12:00:00.000Z',
    };
    expect(checkpointText(first)).toBe(`deals-checkpoint-v1 1 - 1 3 3 ${'ab'.repeat(32)} 2026-06-15T12:00:00.000Z`);
    const second: Checkpoint = { ...first, number: 2, previous: checkpointHash(first), fromPosition: '4', toPosition: '4', count: 1 };
    expect(checkpointHash(second)).not.toBe(checkpointHash(first));
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const signature = sign(null, Buffer.from(checkpointText(second)), privateKey);
    expect(verify(null, Buffer.from(checkpointText(second)), publicKey, signature)).toBe(true);
    expect(verify(null, Buffer.from(checkpointText({ ...second, count: 2 })), publicKey, signature)).toBe(false);
  });
});
