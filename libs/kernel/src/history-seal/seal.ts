import { createHash, createHmac, createPrivateKey, createPublicKey, KeyObject, sign, verify } from 'node:crypto';

/**
 * The seal of the event log: every event's hash, chained along its stream, and the log's events
 * gathered, in log order, into checkpoints whose Merkle root the service signs. An edit of a stored
 * event changes its hash; a removal, insertion or reordering breaks its stream's chain or a
 * checkpoint's root; and a signed checkpoint an auditor kept cannot be made again without the key.
 *
 * Every hash is SHA-256 over bytes laid out here, so that a script with `node:crypto` alone (or any
 * other language's SHA-256 and Ed25519) checks a proof.
 */

/**
 * What of an event is sealed: where it is, what it is, and its data and metadata (JSON values, as
 * the store gives them back: their JSON text, keys in the order read, is what is hashed; a store
 * gives an event back alike every time it is read).
 */
export interface SealedEvent {
  streamId: string;
  revision: number;
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
}

const sha256 = (...parts: Buffer[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** A field as its length (4 bytes, big-endian) and its UTF-8 bytes: no two events' fields run together alike. */
function field(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

const EVENT_DOMAIN = Buffer.from('deals-event-v1\n');

/** The event's own hash: of its stream, revision, id, type, and its data's and metadata's JSON text. */
export const eventHash = (event: SealedEvent): Buffer =>
  eventHashOfText({ ...event, data: JSON.stringify(event.data), metadata: JSON.stringify(event.metadata) });

/**
 * {@link eventHash} of an event whose data and metadata are given as JSON text: a store that keeps
 * the text `JSON.stringify` wrote hashes it as stored, with no parsing (stringifying what that text
 * parses to gives the same text back).
 */
export function eventHashOfText(event: Omit<SealedEvent, 'data' | 'metadata'> & { data: string; metadata: string }): Buffer {
  return sha256(
    EVENT_DOMAIN,
    field(event.streamId),
    field(String(event.revision)),
    field(event.id),
    field(event.type),
    field(event.data),
    field(event.metadata),
  );
}

/** The hash before a stream's first event: 32 zero bytes. */
export const STREAM_START = Buffer.alloc(32);

/** An event's link in its stream's chain: the hash of the link before it (its predecessor's) and of its own hash. */
export const streamLink = (previousLink: Buffer, ownHash: Buffer): Buffer => sha256(previousLink, ownHash);

/** A Merkle tree's leaf and inner node hashes (RFC 6962's, so that a leaf never passes for a node). */
const leafHash = (link: Buffer) => sha256(Buffer.from([0]), link);
const nodeHash = (left: Buffer, right: Buffer) => sha256(Buffer.from([1]), left, right);

/** The largest power of two below `n` (n ≥ 2): where RFC 6962 splits a tree. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The Merkle root of a checkpoint's links, in log order (RFC 6962 Merkle tree hash); of none, the hash of nothing. */
export function merkleRoot(links: readonly Buffer[]): Buffer {
  return links.length === 0 ? sha256() : subtreeRoot(links, 0, links.length, null);
}

/** The root of `links[from, to)`; `memo` keeps the roots of subtrees already hashed (several paths of one tree share them). */
function subtreeRoot(links: readonly Buffer[], from: number, to: number, memo: Map<number, Buffer> | null): Buffer {
  if (to - from === 1) return leafHash(links[from]);
  const key = from * (links.length + 1) + to;
  const known = memo?.get(key);
  if (known) return known;
  const k = from + split(to - from);
  const root = nodeHash(subtreeRoot(links, from, k, memo), subtreeRoot(links, k, to, memo));
  memo?.set(key, root);
  return root;
}

/** One step of an audit path: the sibling's hash, and on which side of the path it stands. */
export interface ProofStep {
  side: 'left' | 'right';
  hash: Buffer;
}

/**
 * The audit path of the link at `index` among `links` (RFC 6962): the siblings from the leaf up,
 * each with its side. Give the same `memo` for several paths of one tree: each subtree is hashed once.
 */
export function merkleProof(links: readonly Buffer[], index: number, memo: Map<number, Buffer> = new Map()): ProofStep[] {
  if (index < 0 || index >= links.length) throw new RangeError(`no link ${index} among ${links.length}`);
  const path: ProofStep[] = [];
  let [from, to] = [0, links.length];
  while (to - from > 1) {
    const k = from + split(to - from);
    if (index < k) {
      path.unshift({ side: 'right', hash: subtreeRoot(links, k, to, memo) });
      to = k;
    } else {
      path.unshift({ side: 'left', hash: subtreeRoot(links, from, k, memo) });
      from = k;
    }
  }
  return path;
}

/** The root an audit path leads to from a link: what a checkpoint's `root` must be. */
export function rootOfPath(link: Buffer, path: readonly ProofStep[]): Buffer {
  let hash = leafHash(link);
  for (const step of path) hash = step.side === 'left' ? nodeHash(step.hash, hash) : nodeHash(hash, step.hash);
  return hash;
}

/** Whether `proof` shows the link at `index` of a tree of `count` links has the root `root` (its sides as the index puts them). */
export function verifyMerkleProof(link: Buffer, index: number, count: number, proof: readonly ProofStep[], root: Buffer): boolean {
  if (index < 0 || index >= count) return false;
  // From the root down: at each level, on which side the path's sibling stands.
  const sides: Array<'left' | 'right'> = [];
  let [at, size] = [index, count];
  while (size > 1) {
    const k = split(size);
    sides.unshift(at < k ? 'right' : 'left');
    [at, size] = at < k ? [at, k] : [at - k, size - k];
  }
  return sides.length === proof.length && proof.every((step, i) => step.side === sides[i]) && rootOfPath(link, proof).equals(root);
}

/** A signed checkpoint: the links of the events from `fromPosition` to `toPosition` (log order) under one root. */
export interface Checkpoint {
  /** 1, 2, ...: each names the one before it. */
  number: number;
  /** The hash of the checkpoint before (hex); null for the first. */
  previous: string | null;
  fromPosition: string;
  toPosition: string;
  count: number;
  /** The Merkle root of the events' stream links, hex. */
  root: string;
  /** When it was sealed (ISO 8601). */
  sealedAt: string;
}

/** The bytes a checkpoint's hash and signature are over: its fields as one line of text, in this order. */
export const checkpointText = (c: Checkpoint): string =>
  `deals-checkpoint-v1 ${c.number} ${c.previous ?? '-'} ${c.fromPosition} ${c.toPosition} ${c.count} ${c.root} ${c.sealedAt}`;

/** A checkpoint's hash, hex: what the next one names as `previous`. */
export const checkpointHash = (c: Checkpoint): string => sha256(Buffer.from(checkpointText(c), 'utf8')).toString('hex');

/** The DER prefix of an Ed25519 private key's PKCS #8 form, before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The installation's checkpoint-signing key, from a secret of it (any length: its seed is derived). */
export function checkpointSigningKey(secret: Buffer): { privateKey: KeyObject; publicKey: KeyObject } {
  const seed = createHmac('sha256', secret).update('deals checkpoint signing key v1').digest();
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** A checkpoint signed: the Ed25519 signature of its text, base64. */
export const signCheckpoint = (checkpoint: Checkpoint, privateKey: KeyObject): string =>
  sign(null, Buffer.from(checkpointText(checkpoint), 'utf8'), privateKey).toString('base64');

/** Whether `signature` is the key's over the checkpoint's text. */
export const checkpointSigned = (checkpoint: Checkpoint, signature: string, publicKey: KeyObject): boolean =>
  verify(null, Buffer.from(checkpointText(checkpoint), 'utf8'), publicKey, Buffer.from(signature, 'base64'));
