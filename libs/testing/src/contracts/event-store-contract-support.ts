import { EventStore, NewEvent, RecordedEvent } from '@deals/kernel';
import { randomUUID } from 'node:crypto';

export interface EventStoreUnderTest {
  store: EventStore;
  /** A second, independent connection to the same log (another process in production). */
  connectAgain?: () => Promise<EventStore>;
  cleanup: () => Promise<void>;
}

/** The store each check of the contract works on, opened afresh before it. */
export interface ContractRun {
  subject: EventStoreUnderTest;
  store: EventStore;
}

/** A stream of its own for each check: the suite may share a server with other data. */
export const stream = (label: string) => `contract${label}-${randomUUID().replace(/-/g, '')}`;

export const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { occurredAt: '2026-01-01T00:00:00.000Z', partnerId: 'p1', actor: 'operator', requestId: 'r1' },
});

/** How long a delivery may take before it counts as hung: the caller's assertion then fails on what came. */
const HUNG_MS = 20_000;

/** What a subscription from `after` delivers until `until` holds of it (or {@link HUNG_MS} passes). */
export async function collect(store: EventStore, after: string | null, until: (events: RecordedEvent[]) => boolean, ms = HUNG_MS) {
  const seen: RecordedEvent[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const subscription = store.subscribe({
    after,
    onEvents: async (events) => {
      seen.push(...events);
      if (until(seen)) done();
    },
  });
  const timer = setTimeout(done, ms);
  await finished;
  clearTimeout(timer);
  await subscription.close();
  return seen;
}
