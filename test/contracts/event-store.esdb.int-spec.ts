import { EsdbEventStore } from '@deals/adapters/event-store/esdb/esdb-event-store.adapter';
import { eventStoreContract } from '@deals/testing/contracts/event-store.contract';

const url = process.env.EVENTSTORE_URL;

if (!url) {
  describe.skip('EventStore contract: eventstoredb — skipped: EVENTSTORE_URL is not set (the URL of an EventStoreDB server to run it against)', () => {
    it('needs a server', () => undefined);
  });
} else {
  eventStoreContract('eventstoredb', async () => {
    const store = new EsdbEventStore(url);
    // Fail here, with the server's error, rather than in the middle of a test.
    await store.ping();
    return {
      store,
      connectAgain: async () => {
        const other = new EsdbEventStore(url);
        await other.ping();
        return other;
      },
      cleanup: () => store.close(),
    };
  });
}
