import { ManualClock, SequentialIdGenerator, ValidationFailed, ViewProgress, WrongExpectedRevision } from '@deals/kernel';
import { MemoryEventStore, MemoryLog } from '@deals/testing';
import { MAX_ENDPOINTS } from '../domain/webhook-endpoint/webhook-endpoint-places.decider';
import { webhookEndpointPlacesStream, webhookEndpointStream } from '../domain/webhook-endpoint/webhook-endpoint.events';
import type { WebhookEndpointQueries } from '../queries/webhook-endpoint.queries';
import { WebhookEndpointWrites } from './webhook-endpoint-writes';
import type { WebhookSettings } from './webhook-settings';

const caller = { partnerId: 'p1', actor: 'partner:p1' };
const terms = (i: number) => ({ url: `https://127.0.0.1/hooks/${i}`, description: '', types: ['*'], enabled: true });
const settings: WebhookSettings = { allowPrivateAddresses: true, retryDelaysMs: [], timeoutMs: 1000 };
const progress = { waitFor: async () => undefined, shows: async () => true } as unknown as ViewProgress;

/**
 * One process's writes over a log several processes may share: each store has its own stream cache
 * and lanes, so two of them over one log conflict on their appends as two API processes do.
 * `earlier`: the partner's live endpoints as the view lists them.
 */
function process(log: MemoryLog, name: string, earlier: string[] = []) {
  const store = new MemoryEventStore(log);
  const endpoints = { ofPartner: async () => earlier.map((_id) => ({ _id })) };
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const writes = new WebhookEndpointWrites(
    store,
    clock,
    new SequentialIdGenerator(name),
    settings,
    endpoints as unknown as WebhookEndpointQueries,
    progress,
  );
  return { store, writes };
}

const typesOf = (log: MemoryLog, streamId: string) => (log.streams.get(streamId) ?? []).map((e) => e.type);
const madeIn = (log: MemoryLog) =>
  [...log.streams.entries()].filter(([id, events]) => id.startsWith('webhookendpoint-') && events[0].type === 'WebhookEndpointCreated');

describe('webhook endpoint writes: the limit decided on the partner’s places stream', () => {
  it('60 registrations at once through two processes make 16 endpoints; the others are refused', async () => {
    const log: MemoryLog = { streams: new Map(), last: 0 };
    const processes = [process(log, 'a'), process(log, 'b')];
    let conflicts = 0;
    for (const { store } of processes) {
      const append = store.append.bind(store);
      jest.spyOn(store, 'append').mockImplementation((streamId, events, expected) =>
        append(streamId, events, expected).catch((error: unknown) => {
          if (error instanceof WrongExpectedRevision) conflicts++;
          throw error;
        }),
      );
    }
    const outcomes = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => processes[i % 2].writes.create(terms(i), caller)));
    const made = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason);
    expect(made).toHaveLength(MAX_ENDPOINTS);
    expect(refused).toHaveLength(60 - MAX_ENDPOINTS);
    for (const error of refused) expect(error).toBeInstanceOf(ValidationFailed);
    expect(madeIn(log)).toHaveLength(MAX_ENDPOINTS);
    // The processes did race: some appends to the places stream found the other's first.
    expect(conflicts).toBeGreaterThan(0);
  });

  it('counts the endpoints the view lists when the places stream is new; a deletion frees a place', async () => {
    const log: MemoryLog = { streams: new Map(), last: 0 };
    const older = Array.from({ length: 5 }, (_, i) => `we_old${i}`);
    const { writes } = process(log, 'a', older);
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => writes.create(terms(i), caller)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(MAX_ENDPOINTS - older.length);
    expect(typesOf(log, webhookEndpointPlacesStream('p1'))[0]).toBe('WebhookEndpointsCounted');

    const { endpointId } = madeIn(log)[0][1][0].data as { endpointId: string };
    await writes.delete(endpointId, caller);
    expect(typesOf(log, webhookEndpointStream(endpointId)).at(-1)).toBe('WebhookEndpointDeleted');
    expect(typesOf(log, webhookEndpointPlacesStream('p1')).at(-1)).toBe('WebhookEndpointPlaceFreed');
    await expect(writes.create(terms(98), caller)).resolves.toMatchObject({ endpointId: expect.any(String) });
    await expect(writes.create(terms(99), caller)).rejects.toBeInstanceOf(ValidationFailed);
  });

  it('gives its place back when the endpoint’s own append fails, abandoning it first', async () => {
    const log: MemoryLog = { streams: new Map(), last: 0 };
    const { store, writes } = process(log, 'a');
    const append = store.append.bind(store);
    jest.spyOn(store, 'append').mockImplementation(async (streamId, events, expected) => {
      if (events[0].type === 'WebhookEndpointCreated') throw new Error('the disk is full');
      return append(streamId, events, expected);
    });
    await expect(writes.create(terms(1), caller)).rejects.toThrow('the disk is full');
    expect(typesOf(log, webhookEndpointStream('we_a1'))).toEqual(['WebhookEndpointAbandoned']);
    expect(typesOf(log, webhookEndpointPlacesStream('p1'))).toEqual([
      'WebhookEndpointsCounted',
      'WebhookEndpointPlaceTaken',
      'WebhookEndpointPlaceFreed',
    ]);
  });
});
