import { DeadlineExceededError, EventStoreDBClient, StreamDeletedError, UnknownError } from '@eventstore/db-client';
import { appendToStream, NewEvent, WrongExpectedRevision } from '@deals/kernel';
import { EsdbEventStore } from './esdb-event-store.adapter';

/**
 * How the adapter reads the client's append answers: the client's calls are replaced (no server can
 * run here; the contract suite runs against one where EVENTSTORE_URL is set), each with what the
 * client 6.2.1 gives in that case (its append.js / batchAppend.js / unpackError.js).
 */
describe('EsdbEventStore, appending to one stream, on the answers of the client', () => {
  afterEach(() => jest.restoreAllMocks());
  const event: NewEvent = {
    id: '00000000-0000-4000-8000-000000000001',
    type: 'Thing',
    data: {},
    metadata: { occurredAt: '2026-06-15T12:00:00.000Z' },
  };
  const at = (revision: bigint) => ({ event: { revision, type: 'Thing', isJson: true } });
  const committed = { success: true, nextExpectedRevision: 1n, position: { commit: 7n, prepare: 7n } };

  it('tries again, with the same event ids, an append whose outcome is unknown (a server timeout, an unknown error)', async () => {
    const store = new EsdbEventStore('esdb://localhost:2113?tls=false');
    const append = jest
      .spyOn(EventStoreDBClient.prototype, 'appendToStream')
      .mockRejectedValueOnce(new DeadlineExceededError())
      .mockRejectedValueOnce(new UnknownError())
      .mockResolvedValueOnce(committed as never);
    expect(await appendToStream(store, 's', [event], 0)).toEqual({
      nextExpectedRevision: 1,
      position: `${'7'.padStart(20, '0')}:${'7'.padStart(20, '0')}`,
    });
    expect(append).toHaveBeenCalledTimes(3);
    const ids = append.mock.calls.map(([, events]) => (events as Array<{ id: string }>).map((e) => e.id));
    expect(ids).toEqual([[event.id], [event.id], [event.id]]);
  });

  it('does not try again an append expecting any revision: the server could not tell a retry from a second append', async () => {
    const store = new EsdbEventStore('esdb://localhost:2113?tls=false');
    const append = jest.spyOn(EventStoreDBClient.prototype, 'appendToStream').mockRejectedValue(new DeadlineExceededError());
    await expect(appendToStream(store, 's', [event], 'any')).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(append).toHaveBeenCalledTimes(1);
  });

  it('does not try again an append the server refused for good', async () => {
    const store = new EsdbEventStore('esdb://localhost:2113?tls=false');
    const append = jest
      .spyOn(EventStoreDBClient.prototype, 'appendToStream')
      .mockRejectedValue(Object.create(StreamDeletedError.prototype) as Error);
    await expect(appendToStream(store, 's', [event], 0)).rejects.toBeInstanceOf(StreamDeletedError);
    expect(append).toHaveBeenCalledTimes(1);
  });

  it('takes an append answered `success: false` as refused, never as written', async () => {
    const store = new EsdbEventStore('esdb://localhost:2113?tls=false');
    jest
      .spyOn(EventStoreDBClient.prototype, 'appendToStream')
      .mockResolvedValue({ success: false, nextExpectedRevision: 1n, position: undefined } as never);
    jest.spyOn(EventStoreDBClient.prototype, 'readStream').mockImplementation((() =>
      (async function* () {
        yield at(4n);
      })()) as never);
    const refused = appendToStream(store, 's', [event], 0);
    await expect(refused).rejects.toBeInstanceOf(WrongExpectedRevision);
    await expect(refused).rejects.toMatchObject({ actual: 4 });
  });

  it('refuses a connection string that turns refusals into answers, and an empty append', async () => {
    for (const option of ['throwOnAppendFailure=false', 'throw_on_append_failure=false', 'THROWONAPPENDFAILURE= false']) {
      expect(() => new EsdbEventStore(`esdb://localhost:2113?tls=false&${option}`)).toThrow(/throwOnAppendFailure/);
    }
    await expect(appendToStream(new EsdbEventStore('esdb://localhost:2113?tls=false'), 's', [], 'no_stream')).rejects.toThrow(
      /at least one event/,
    );
  });
});
