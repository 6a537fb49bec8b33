// node check-seal.mjs audit.json key.pem: GET /audit/purchases/:id's `seal` against GET /audit/checkpoint-key's key
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
const { seal } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const key = createPublicKey(readFileSync(process.argv[3], 'utf8'));
const sha = (...parts) => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest();
const field = (text) => { const bytes = Buffer.from(text); const length = Buffer.alloc(4); length.writeUInt32BE(bytes.length); return Buffer.concat([length, bytes]); };
const checkpoints = new Map(seal.checkpoints.map((c) => [c.number, c]));
let link = Buffer.alloc(32);
for (const e of seal.events) {
  const hash = sha(Buffer.from('deals-event-v1\n'), ...[seal.stream, String(e.revision), e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)].map(field));
  link = sha(link, hash);
  if (e.checkpoint === null) { console.log(`${e.position} ${e.type}: not sealed yet`); continue; }
  const root = e.proof.reduce((node, s) => s.side === 'left' ? sha(Buffer.from([1]), Buffer.from(s.hash, 'hex'), node) : sha(Buffer.from([1]), node, Buffer.from(s.hash, 'hex')), sha(Buffer.from([0]), link));
  const c = checkpoints.get(e.checkpoint);
  const text = `deals-checkpoint-v1 ${c.number} ${c.previous ?? '-'} ${c.from_position} ${c.to_position} ${c.count} ${c.root} ${c.sealed_at}`;
  const ok = hash.toString('hex') === e.hash && link.toString('hex') === e.link && root.toString('hex') === c.root && verify(null, Buffer.from(text), key, Buffer.from(c.signature, 'base64'));
  console.log(`${e.position} ${e.type}: ${ok ? `verified under checkpoint ${c.number}` : 'DOES NOT MATCH'}`);
  if (!ok) process.exitCode = 1;
}
