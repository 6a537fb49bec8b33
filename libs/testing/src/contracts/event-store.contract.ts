import { appendChecks } from './event-store-appends.contract';
import { ContractRun, EventStoreUnderTest } from './event-store-contract-support';
import { readChecks } from './event-store-reads.contract';
import { subscriptionChecks } from './event-store-subscriptions.contract';

export type { EventStoreUnderTest } from './event-store-contract-support';

/**
 * What every EventStore adapter promises (ports/event-store.port.ts). Streams are named per run,
 * and log-wide checks start from the head, so the suite can share a server with other data.
 */
export function eventStoreContract(name: string, open: () => Promise<EventStoreUnderTest>): void {
  describe(`EventStore contract: ${name}`, () => {
    const run = {} as ContractRun;
    beforeEach(async () => {
      run.subject = await open();
      run.store = run.subject.store;
    });
    afterEach(async () => run.subject.cleanup());

    appendChecks(run);
    readChecks(run);
    subscriptionChecks(run);

    it('answers a ping', async () => {
      await expect(run.store.ping()).resolves.toBeUndefined();
    });
  });
}
