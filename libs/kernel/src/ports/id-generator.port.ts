import { randomFillSync, randomUUID } from 'node:crypto';

/** Makes identifiers. Injected so that tests can predict them. */
export abstract class IdGenerator {
  /** A new unique id (UUID form), used for events and records. */
  abstract next(): string;
  /** A new short, URL-safe, hard-to-guess id (for coupons, purchases shown to people). */
  abstract short(): string;
}

const SHORT_BYTES = 12;
const POOL_IDS = 128;

/**
 * A maker of random texts of `bytes` random bytes each, in base64url. The bytes are drawn a pool at
 * a time (as `randomUUID` does): one call to the system's generator per 128 texts, instead of one
 * per text (`randomBytes`, ~2.3 µs each here, against ~0.13).
 */
export function pooledRandomText(bytes: number): () => string {
  const pool = Buffer.alloc(bytes * POOL_IDS);
  let used = POOL_IDS;
  return () => {
    if (used === POOL_IDS) {
      randomFillSync(pool);
      used = 0;
    }
    const at = bytes * used++;
    return pool.toString('base64url', at, at + bytes);
  };
}

export class RandomIdGenerator extends IdGenerator {
  private readonly shortText = pooledRandomText(SHORT_BYTES);

  next(): string {
    return randomUUID();
  }
  short(): string {
    return this.shortText();
  }
}

/** Predictable ids for tests: `<prefix>-1`, `<prefix>-2`, ... */
export class SequentialIdGenerator extends IdGenerator {
  private n = 0;
  constructor(private readonly prefix = 'id') {
    super();
  }
  next(): string {
    return `${this.prefix}-${++this.n}`;
  }
  short(): string {
    return `${this.prefix}${++this.n}`;
  }
}
