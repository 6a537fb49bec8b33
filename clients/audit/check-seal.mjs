// node check-seal.mjs purchase-<id> audit.json key.pem: a history's `seal` (GET /audit/purchases/:id, ...), against GET /audit/checkpoint-key's key
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
const [stream, answer, pem] = process.argv.slice(2);
const { seal } = JSON.parse(readFileSync(answer, 'utf8'));
const key = createPublicKey(readFileSync(pem, 'utf8'));
const sha = (...parts) => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest();
const field = (text) => { const bytes = Buffer.from(text); const length = Buffer.alloc(4); length.writeUInt32BE(bytes.length); return Buffer.concat([length, bytes]); };
// The sides of a leaf's path (RFC 6962), from the leaf up, as its index in a tree of `size` leaves puts them.
const sides = (at, size) => { const out = []; while (size > 1) { let k = 1; while (k * 2 < size) k *= 2; out.unshift(at < k ? 'right' : 'left'); [at, size] = at < k ? [at, k] : [at - k, size - k]; } return out; };
const fail = (why) => { console.log(`DOES NOT MATCH: ${why}`); process.exitCode = 1; };
if (seal.stream !== stream) fail(`the seal is of ${seal.stream}`);
for (const position of seal.removed) fail(`the event sealed at ${position} is gone from the log`);
let link = Buffer.alloc(32);
for (const e of seal.events) {
  const hash = sha(Buffer.from('deals-event-v1\n'), ...[seal.stream, String(e.revision), e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)].map(field));
  link = sha(link, hash);
  if (e.checkpoint === null) { console.log(`${e.position} ${e.type}: not sealed yet`); continue; }
  const c = seal.checkpoints.find((checkpoint) => checkpoint.number === e.checkpoint);
  if (!c || e.proof.map((s) => s.side).join() !== sides(e.index, c.count).join()) { fail(`${e.position} ${e.type}: its checkpoint or path`); continue; }
  const root = e.proof.reduce((node, s) => s.side === 'left' ? sha(Buffer.from([1]), Buffer.from(s.hash, 'hex'), node) : sha(Buffer.from([1]), node, Buffer.from(s.hash, 'hex')), sha(Buffer.from([0]), link));
  const text = `deals-checkpoint-v1 ${c.number} ${c.previous ?? '-'} ${c.from_position} ${c.to_position} ${c.count} ${c.root} ${c.sealed_at}`;
  const ok = hash.toString('hex') === e.hash && link.toString('hex') === e.link && root.toString('hex') === c.root && verify(null, Buffer.from(text), key, Buffer.from(c.signature, 'base64'));
  if (ok) console.log(`${e.position} ${e.type}: verified under checkpoint ${c.number}`); else fail(`${e.position} ${e.type}`);
}
