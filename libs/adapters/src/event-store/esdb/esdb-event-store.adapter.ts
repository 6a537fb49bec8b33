import {
  ANY,
  AccessDeniedError,
  BACKWARDS,
  END,
  InvalidArgumentError,
  MaxAppendSizeExceededError,
  StreamDeletedError,
  EventStoreDBClient,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type AppendResult as EsdbAppendResult,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import {
  AppendResult,
  checkStreamAppends,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  LogPosition,
  LogSubscription,
  NewEvent,
  ObservedStore,
  RecordedEvent,
  StoreObserver,
  StreamAppend,
  SubscribeOptions,
  WrongExpectedRevision,
} from '@deals/kernel';

const WIDTH = 20; // digits of the largest unsigned 64-bit number
const MAX_U64 = 2n ** 64n - 1n;
const POSITION = /^(\d{20}):(\d{20})$/;

/** `commit:prepare`, each zero-padded to 20 digits, so string order is log order. */
export function encodeEsdbPosition({ commit, prepare }: Position): LogPosition {
  if (commit < 0n || prepare < 0n) throw new Error(`negative EventStoreDB position ${commit}:${prepare}`);
  return `${commit.toString().padStart(WIDTH, '0')}:${prepare.toString().padStart(WIDTH, '0')}`;
}

export function decodeEsdbPosition(position: LogPosition): Position {
  const match = POSITION.exec(position);
  if (!match) throw new Error(`not an EventStoreDB log position: ${JSON.stringify(position)}`);
  return { commit: BigInt(match[1]), prepare: BigInt(match[2]) };
}

const APPEND_ATTEMPTS = 3;
const MAX_BATCH = 500;
const HEAD_PAGE = 50;
const MAX_BACKOFF_MS = 5000;
const noop = () => undefined;

/**
 * Append failures that say the append was not made and never will be: anything else (a server
 * timeout, `DeadlineExceeded`, `Unavailable`, a dropped batch stream, `Unknown`) may have come after
 * the events were committed, and is tried again with the same event ids, which the server then
 * takes as the same append (an exact expected revision makes the retry a no-op if the first try landed).
 */
/**
 * Whether the connection string sets `throwOnAppendFailure` to false, read as the client reads its
 * options (6.2.1, parseConnectionString: the key lowercased without `_` and `-`, the value trimmed).
 */
function turnsOffAppendFailures(connectionString: string): boolean {
  const query = connectionString.split('?')[1] ?? '';
  return query.split('&').some((pair) => {
    const [key = '', value = ''] = pair.split('=');
    return key.toLowerCase().replace(/[_-]/g, '') === 'throwonappendfailure' && value.trim().toLowerCase() === 'false';
  });
}

const DEFINITE_APPEND_FAILURES = [StreamDeletedError, AccessDeniedError, MaxAppendSizeExceededError, InvalidArgumentError];

/** Events we hand out: our own JSON events, never the server's `$` system events. */
const isDomainEvent = (event: EsdbRecordedEvent | undefined): event is EsdbRecordedEvent =>
  event !== undefined && event.isJson && !event.type.startsWith('$');

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  // Before 22.6 the server sent no real position on stream reads (2^64-1 stood in for it).
  if (!event.position || event.position.commit === MAX_U64) {
    throw new Error(`event ${event.id} came without its log position: EventStoreDB 22.10 or later is needed`);
  }
  const metadata =
    event.metadata && !(event.metadata instanceof Uint8Array)
      ? (event.metadata as unknown as EventMetadata)
      : { occurredAt: event.created.toISOString() };
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata,
    streamId: event.streamId,
    revision: Number(event.revision),
    position: encodeEsdbPosition(event.position),
  };
}

async function drain<E>(read: AsyncIterable<E>): Promise<E[]> {
  const out: E[] = [];
  for await (const item of read) out.push(item);
  return out;
}

/**
 * The event log on EventStoreDB (or KurrentDB) through `@eventstore/db-client` 6.x.
 *
 * Keeps the port's promises with the server's own guarantees: appends are atomic and checked
 * against the expected revision by the server, and a retried append (after the connection dropped
 * with the outcome unknown) reuses the event ids, which the server deduplicates. Positions are the
 * server's `{commit, prepare}` written as `commit:prepare`, two zero-padded 20-digit numbers.
 * Subscriptions follow `$all` without system events and resubscribe by themselves after an error
 * from the last delivered position (the client does not), so a batch may come twice.
 * Events that are not JSON (written by other tools) are left out of `readAll` and `subscribe`.
 * Needs EventStoreDB 22.10 or later, which gives events read from a stream their log position.
 * A subscription's `close()` waits for the running handler, so it must not be awaited inside it.
 * Appends to several streams go one after the other (it is not `AtomicAcrossStreams`): this client
 * has no multi-stream append (KurrentDB 25.1's is in its successor, `@kurrent/kurrentdb-client`),
 * so a refusal leaves the appends before it written.
 */
export class EsdbEventStore extends EventStore implements ObservedStore {
  readonly backend = 'eventstoredb';
  readonly observer: StoreObserver | null;
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<LogSubscription>();

  constructor(connectionString: string, options: { observer?: StoreObserver | null } = {}) {
    super();
    this.observer = options.observer ?? null;
    // With it false, a refused append resolves (`success: false`) instead of throwing; it is
    // refused here, and a refusal that resolves is still taken as one below.
    if (turnsOffAppendFailures(connectionString))
      throw new Error('EVENTSTORE_URL: throwOnAppendFailure=false is not supported (a refused append must throw)');
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  /** One append alone as the server's append to a stream; several, one after the other. */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 1) return [await this.append(appends[0].streamId, appends[0].events, appends[0].expected)];
    checkStreamAppends(appends);
    const results: AppendResult[] = [];
    for (const { streamId, events, expected } of appends) results.push(await this.append(streamId, events, expected));
    return results;
  }

  private async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const expectedRevision: AppendExpectedRevision = expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : BigInt(expected);
    // The server answers an empty append with success and revision 0, even for a stream that does not exist.
    if (events.length === 0) throw new Error(`an append to ${streamId} needs at least one event`);
    const data = events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: e.metadata }));
    let result: EsdbAppendResult | undefined;
    const started = performance.now();
    for (let attempt = 1; !result; attempt++) {
      try {
        result = await this.client.appendToStream(streamId, data, { expectedRevision });
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) {
          const actual = error.actualVersion;
          throw new WrongExpectedRevision(streamId, expected, actual === NO_STREAM || actual < 0n ? 'no_stream' : Number(actual));
        }
        // Outcome unknown: the same event ids make the retry a no-op if the first try landed. The
        // server checks them against the events after the expected revision; with `any` it has
        // only a cache of recent ids, lost on a leader change (when such errors come), so an
        // `any` append is not tried again.
        const definite = DEFINITE_APPEND_FAILURES.some((kind) => error instanceof kind);
        if (definite || expected === 'any' || attempt >= APPEND_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
    if (!result.success) throw new WrongExpectedRevision(streamId, expected, await this.lastRevision(streamId));
    // Servers leave the position out when they answer a deduplicated retry; our last event has it.
    const position = result.position ? encodeEsdbPosition(result.position) : await this.positionAt(streamId, result.nextExpectedRevision);
    // Each append is its own commit on the server.
    this.observer?.committed(1, (performance.now() - started) / 1000);
    this.observer?.appended(events);
    return { nextExpectedRevision: Number(result.nextExpectedRevision), position };
  }

  /** The stream's last revision, read backwards (for a refusal that did not say it). */
  private async lastRevision(streamId: string): Promise<number | 'no_stream'> {
    try {
      const [last] = await drain(this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 }));
      return last?.event ? Number(last.event.revision) : 'no_stream';
    } catch (error) {
      if (error instanceof StreamNotFoundError) return 'no_stream';
      throw error;
    }
  }

  private async positionAt(streamId: string, revision: bigint): Promise<LogPosition> {
    const [found] = await drain(this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 }));
    if (!found?.event) throw new Error(`no event at revision ${revision} of ${streamId}`);
    return toRecorded(found.event).position;
  }

  async readStream(streamId: string, fromRevision = 0): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      const options = fromRevision > 0 ? { fromRevision: BigInt(fromRevision) } : {};
      for await (const resolved of this.client.readStream(streamId, options)) {
        if (resolved.event) events.push(toRecorded(resolved.event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let from: ReadPosition = after === null ? START : decodeEsdbPosition(after);
    let seen = after;
    while (out.length < maxCount) {
      // readAll includes the event at `fromPosition`: ask for one more and drop it below.
      const want = maxCount - out.length + 1;
      const page = await drain(this.client.readAll({ fromPosition: from, maxCount: want }));
      let last: LogPosition | null = null;
      for (const { event } of page) {
        if (!event) continue;
        const position = encodeEsdbPosition(event.position);
        last = position;
        if (seen !== null && position <= seen) continue;
        if (isDomainEvent(event) && out.length < maxCount) out.push(toRecorded(event));
      }
      if (page.length < want || last === null) break;
      from = decodeEsdbPosition(last);
      seen = last;
    }
    return out;
  }

  async head(): Promise<LogPosition | null> {
    let from: ReadPosition = END;
    let seen: LogPosition | null = null;
    for (;;) {
      const page = await drain(this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: HEAD_PAGE }));
      let last: LogPosition | null = null;
      for (const { event } of page) {
        if (!event) continue;
        const position = encodeEsdbPosition(event.position);
        last = position;
        if (seen !== null && position >= seen) continue;
        if (isDomainEvent(event)) return position;
      }
      if (page.length < HEAD_PAGE || last === null) return null;
      from = decodeEsdbPosition(last);
      seen = last;
    }
  }

  subscribe({ after, onEvents, onError }: SubscribeOptions): LogSubscription {
    if (after !== null) decodeEsdbPosition(after); // a foreign position fails here, not in the loop
    let closed = false;
    let current: AllStreamSubscription | undefined;
    let wake = noop;
    let delivered = after;

    const run = async () => {
      for (let failures = 0; !closed;) {
        let subscription: AllStreamSubscription | undefined;
        try {
          subscription = current = this.client.subscribeToAll({
            fromPosition: delivered === null ? START : decodeEsdbPosition(delivered),
            filter: excludeSystemEvents(),
          });
          subscription.on('error', noop); // the iterator reports errors; this keeps a late one from crashing the process
          let batch: RecordedEvent[] = [];
          for await (const { event } of subscription as AsyncIterable<AllStreamResolvedEvent>) {
            if (closed) break;
            if (isDomainEvent(event)) batch.push(toRecorded(event));
            // Deliver what has arrived so far; waiting for a full batch would stall live events.
            if (batch.length > 0 && (batch.length >= MAX_BATCH || subscription.readableLength === 0)) {
              await onEvents(batch);
              delivered = batch[batch.length - 1].position;
              batch = [];
              failures = 0;
            }
          }
          if (!closed) throw new Error('the subscription to $all ended');
        } catch (error) {
          if (closed) break;
          try {
            onError?.(error);
          } catch {
            // a failing error listener must not stop the resubscription
          }
          const backoff = Math.min(MAX_BACKOFF_MS, 100 * 2 ** failures++);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, backoff);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        } finally {
          subscription?.unsubscribe().catch(noop);
        }
      }
    };

    const running = run();
    const handle: LogSubscription = {
      close: async () => {
        closed = true;
        wake();
        current?.destroy(); // ends the iteration now; the loop's `finally` cancels the gRPC call
        await running;
        this.subscriptions.delete(handle);
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  async ping(): Promise<void> {
    await drain(this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}
