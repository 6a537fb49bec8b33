import { LogPosition, LogSubscription, RecordedEvent, SubscribeOptions } from '@deals/kernel';
import { Client } from 'pg';
import { sessionClient } from '../../postgres-pool';
import { CHANNEL } from './postgres-event-log.schema';

/** How often a subscription looks for new events without a notification (one lost while reconnecting), unless told otherwise. */
export const POLL_MS = 500;
/** How soon a subscription reads again when committed events wait behind an older transaction (which may send no notice). */
const HELD_BACK_MS = 5;
/** Events one subscription read fetches at most. */
const PAGE = 500;

/** What a subscription reads through: its store (whose reads and notices its tests watch). */
export interface FeedSource {
  /** How often a subscription looks for new events without a notification. */
  readonly pollMs: number;
  /** Resolves once the store listens for notices (see {@link PostgresLogFeed.listen}). */
  listen(): Promise<void>;
  /** A page of the log after a position, and whether events committed after it are held back by the horizon. */
  readPage(after: LogPosition | null, maxCount: number): Promise<{ events: RecordedEvent[]; heldBack: boolean }>;
}

/** A store's subscriptions: each reads pages of the log, woken by one LISTEN connection for them all, or by its poll. */
export class PostgresLogFeed {
  private closed = false;
  private readonly subscriptions = new Set<PostgresSubscription>();
  private listener: Client | null = null;
  /** Settles once {@link listener} listens, or has failed to. */
  private listening: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly source: FeedSource,
    /** Wakes every subscription (the store's, so that it may be watched): a notice came, or may have been missed. */
    private readonly wakeAll: () => void,
  ) {}

  subscribe(options: SubscribeOptions): LogSubscription {
    const subscription = new PostgresSubscription(this.source, options, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    subscription.start();
    return subscription;
  }

  /**
   * One LISTEN connection for all of this store's subscriptions (a worker runs one a view): a
   * notification wakes them all. Resolves once it listens, so that a read after it misses no
   * notice; lost, it is opened again on the next subscription's poll, and every subscription reads
   * again once it listens (what was committed meanwhile sent no notice it heard).
   */
  listen(): Promise<void> {
    if (this.closed || !this.subscriptions.size) return Promise.resolve();
    if (this.listener) return this.listening;
    const client = sessionClient(this.url);
    this.listener = client;
    client.on('error', () => {
      if (this.listener !== client) return;
      this.listener = null;
      void client.end().catch(() => undefined);
      // Notices are unheard until it listens again: the subscriptions open it again, and read.
      this.wakeAll();
    });
    client.on('notification', () => this.wakeAll());
    this.listening = (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        if (this.listener === client) this.wakeAll();
      } catch {
        if (this.listener === client) this.listener = null;
        await client.end().catch(() => undefined);
      }
    })();
    return this.listening;
  }

  /** Wakes every subscription. */
  wakeUp(): void {
    for (const subscription of this.subscriptions) subscription.wakeUp();
  }

  /** Stops listening and closes every subscription. */
  async close(): Promise<void> {
    this.closed = true;
    // The listener first: a subscription may be waiting for it to connect.
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
    await Promise.all([...this.subscriptions].map((s) => s.close()));
  }
}

/** A catch-up subscription: reads pages after its position, then waits for a notification or the poll. */
class PostgresSubscription implements LogSubscription {
  private closed = false;
  /** Ends the current wait early. */
  private wake: (() => void) | null = null;
  /** A notification came since the last read began: the next wait is skipped (it may have come mid-read). */
  private woken = false;
  /** The last read failed: its wait is the poll's whole, whatever notices come meanwhile. */
  private backingOff = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly source: FeedSource,
    private readonly options: SubscribeOptions,
    private readonly forget: () => void,
  ) {}

  /** Starts reading (once the feed counts it among its subscriptions, so that it listens for it). */
  start(): void {
    this.done = this.run();
  }

  /** New events may be there (a notification came). */
  wakeUp(): void {
    this.woken = true;
    if (!this.backingOff) this.wake?.();
  }

  private async run(): Promise<void> {
    let after = this.options.after;
    while (!this.closed) {
      let wait = this.source.pollMs;
      let failed = false;
      try {
        await this.source.listen();
        this.woken = false;
        const { events: page, heldBack } = await this.source.readPage(after, PAGE);
        if (this.closed) break;
        if (page.length) {
          await this.options.onEvents(page);
          after = page[page.length - 1].position;
          continue;
        }
        if (heldBack) wait = HELD_BACK_MS;
      } catch (error) {
        failed = true;
        this.options.onError?.(error);
      }
      if (this.woken && !failed) continue;
      this.backingOff = failed;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.done;
    this.forget();
  }
}
