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

export class RandomIdGenerator extends IdGenerator {
  /** Random bytes drawn a pool at a time (as `randomUUID` does): one call to the system's generator per 128 ids. */
  private readonly pool = Buffer.alloc(SHORT_BYTES * POOL_IDS);
  private used = POOL_IDS;

  next(): string {
    return randomUUID();
  }
  short(): string {
    if (this.used === POOL_IDS) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const at = SHORT_BYTES * this.used++;
    return this.pool.toString('base64url', at, at + SHORT_BYTES);
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
