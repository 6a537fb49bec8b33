import { randomBytes, randomUUID } from 'node:crypto';

/** Makes identifiers. Injected so that tests can predict them. */
export abstract class IdGenerator {
  /** A new unique id (UUID form), used for events and records. */
  abstract next(): string;
  /** A new short, URL-safe, hard-to-guess id (for coupons, purchases shown to people). */
  abstract short(): string;
}

export class RandomIdGenerator extends IdGenerator {
  next(): string {
    return randomUUID();
  }
  short(): string {
    return randomBytes(12).toString('base64url');
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
