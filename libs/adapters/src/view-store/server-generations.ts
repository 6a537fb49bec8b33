import type { ViewDocument } from '@deals/kernel';
import { randomBytes } from 'node:crypto';

/** The generation a collection starts with. */
export const FIRST_GENERATION = 'g1';
/** How often a process reads which generations are active (another process's rebuild may have switched one). */
export const POLL_MS = 500;
/** Readers in other processes switch within one poll; the old generation outlives that. */
const DROP_DELAY_MS = 4 * POLL_MS;

/** A rebuild's fresh generation: ordered by time, with random bits against two rebuilds started at once. */
export const newGeneration = (): string => `g${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

/** Keeps in `newest` each id's document of the highest position (the first of equal ones). */
export function keepNewest(newest: Map<string, ViewDocument>, documents: Iterable<ViewDocument>): Map<string, ViewDocument> {
  for (const doc of documents) {
    const seen = newest.get(doc._id);
    if (!seen || doc._pos > seen._pos) newest.set(doc._id, doc);
  }
  return newest;
}

/** A rebuild's one way out: activated or abandoned, once; `label` names it in the error of a second. */
export function settleOnce(label: string): (next: 'activated' | 'abandoned') => void {
  let state: 'open' | 'activated' | 'abandoned' = 'open';
  return (next) => {
    if (state !== 'open') throw new Error(`rebuild ${label} was already ${state}`);
    state = next;
  };
}

/**
 * Which generation of each collection this process reads, for a view store on a server (MongoDB,
 * PostgreSQL) that names each collection's active generation in a table of its own. A rebuild
 * activates its generation with one update there; the process that activated it switches at
 * once, the others on their next {@link poll}, and the replaced generation is dropped once every
 * process has had time to switch. Writing into a replaced generation is refused: its storage is
 * about to go.
 */
export class ServerGenerations {
  private readonly active = new Map<string, string>();
  private readonly listeners = new Set<(collection: string) => void>();
  private readonly pendingDrops = new Set<Promise<void>>();
  /** Generations replaced by a switch (`collection@generation`). */
  private readonly retired = new Set<string>();
  /** Bumped around every switch, so a poll that read the old generation cannot switch back to it. */
  private epoch = 0;
  private polling = false;

  constructor(
    /** Drops a generation's storage and its checkpoint. */
    private readonly drop: (collection: string, generation: string) => Promise<void>,
  ) {}

  has(collection: string): boolean {
    return this.active.has(collection);
  }

  get(collection: string): string | undefined {
    return this.active.get(collection);
  }

  /** The generation read, of a collection that must be defined. */
  of(collection: string): string {
    const generation = this.active.get(collection);
    if (!generation) throw new Error(`view collection ${collection} is not defined; call define() first`);
    return generation;
  }

  entries(): IterableIterator<[string, string]> {
    return this.active.entries();
  }

  /** Records the generation `define` found active; a switch when this process read another until now. */
  defined(collection: string, generation: string): void {
    const cached = this.active.get(collection);
    if (cached !== undefined && cached !== generation) this.switchTo(collection, generation);
    else this.active.set(collection, generation);
  }

  /** Throws when a switch has replaced the generation: its writes would go where no one reads. */
  checkWritable(collection: string, generation: string): void {
    if (this.retired.has(`${collection}@${generation}`))
      throw new Error(`generation ${generation} of ${collection} was replaced; write to the active one`);
  }

  onSwitch(listener: (collection: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Activates a rebuilt generation: `write` names it active on the server and returns the one it
   * replaced there, which is dropped later.
   */
  async activate(collection: string, generation: string, write: () => Promise<string | undefined>): Promise<void> {
    this.epoch++;
    const before = await write();
    this.switchTo(collection, generation);
    if (before && before !== generation) this.dropLater(collection, before);
  }

  /** Switches to the generations `read` finds active on the server; a missed poll is retried on the next tick. */
  async poll(read: (collections: string[]) => Promise<Array<{ collection: string; generation: string }>>): Promise<void> {
    if (this.polling || this.active.size === 0) return;
    this.polling = true;
    const epoch = this.epoch;
    try {
      const found = await read([...this.active.keys()]);
      if (epoch !== this.epoch) return;
      for (const { collection, generation } of found) {
        if (this.active.has(collection) && this.active.get(collection) !== generation) this.switchTo(collection, generation);
      }
    } catch {
      // Retried on the next tick; reads report connection trouble themselves.
    } finally {
      this.polling = false;
    }
  }

  /** Waits for the drops under way. */
  async settled(): Promise<void> {
    await Promise.all(this.pendingDrops);
  }

  private switchTo(collection: string, generation: string): void {
    const previous = this.active.get(collection);
    if (previous && previous !== generation) this.retired.add(`${collection}@${previous}`);
    this.active.set(collection, generation);
    this.epoch++;
    for (const listener of this.listeners) {
      try {
        listener(collection);
      } catch {
        // one failing listener must not keep the others from hearing of the switch
      }
    }
  }

  private dropLater(collection: string, generation: string): void {
    const drop: Promise<void> = new Promise<void>((resolve) => setTimeout(resolve, DROP_DELAY_MS))
      .then(() => this.drop(collection, generation))
      .catch(() => undefined) // the switch is done; a failed drop leaves only unused storage
      .finally(() => this.pendingDrops.delete(drop));
    this.pendingDrops.add(drop);
  }
}
