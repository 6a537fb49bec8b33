import {
  UNMADE_PLACE_MS,
  webhookEndpointDecider,
  webhookEndpointPlacesDecider,
  webhookEndpointPlacesStream,
  webhookEndpointStream,
} from '@deals/event-feed';
import { CommandContext, EventStore, handleCommand, loadAggregate, ManualClock } from '@deals/kernel';
import { runCli, TestApi } from '../../support/api-harness';
import { tempDir } from '../../support/temp-dir';

const LIMIT = 16;
/** The refusal docs/webhooks.md documents for a partner at its limit. */
const FULL = {
  status: 'error',
  error_type: 'validation_failed',
  error_msg: `url a partner has at most ${LIMIT} endpoints`,
  errors: [{ type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: `a partner has at most ${LIMIT} endpoints` }],
};

/**
 * At most 16 webhook endpoints a partner, whatever arrives at once: the limit is decided on the
 * partner's stream of endpoint places, never counted from the view first (docs/decisions.md,
 * "Webhook endpoints"). Registrations race at the real application over HTTPS; a process stopping
 * between an endpoint's two appends is played by writing only the first.
 */
describe('at most 16 webhook endpoints a partner, under any concurrency', () => {
  jest.setTimeout(120_000);
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const dir = tempDir('webhook-limit');
  const env = { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on' };
  let api: TestApi;

  beforeAll(async () => {
    api = await TestApi.start({ clock, dataDir: dir.path, env });
  });
  afterAll(async () => {
    await api.stop();
    dir.remove();
  });

  const as = (partnerId: string): CommandContext => ({ now: clock.now(), metadata: { actor: `partner:${partnerId}`, partnerId } });

  const register = (apiKey: string, i: number) =>
    api.call('POST', '/v1/webhook_endpoints', { apiKey, body: { url: `https://127.0.0.1/hooks/${i}`, types: ['*'] } });
  const listed = async (apiKey: string) => {
    const reply = await api.call('GET', '/v1/webhook_endpoints', { apiKey });
    expect(reply.status).toBe(200);
    return reply.body.webhook_endpoints as Array<{ id: string }>;
  };
  /** `count` registrations at once: the statuses, and the bodies of the refusals. */
  const race = async (apiKey: string, count: number) => {
    const replies = await Promise.all(Array.from({ length: count }, (_, i) => register(apiKey, i)));
    return {
      made: replies.filter((r) => r.status === 201).map((r) => r.body.webhook_endpoint.id as string),
      refused: replies.filter((r) => r.status !== 201),
    };
  };
  const expectRefusedAsFull = (refused: Array<{ status: number; body: unknown }>) => {
    for (const reply of refused) expect(reply).toMatchObject({ status: 422, body: FULL });
  };

  it('60 registrations at once make exactly 16 endpoints; the other 44 are refused with the documented 422', async () => {
    const { apiKey } = await api.createPartner('Racing');
    const { made, refused } = await race(apiKey, 60);
    expect(made).toHaveLength(LIMIT);
    expect(refused).toHaveLength(60 - LIMIT);
    expectRefusedAsFull(refused);
    await api.settle();
    expect((await listed(apiKey)).map((e) => e.id).sort()).toEqual([...made].sort());
    // Full: one more, alone, is refused too.
    expectRefusedAsFull([await register(apiKey, 99)]);
  });

  it('a deleted endpoint frees its place for exactly one of the registrations racing for it', async () => {
    const { apiKey } = await api.createPartner('Deleting');
    const { made } = await race(apiKey, LIMIT);
    expect(made).toHaveLength(LIMIT);
    const removed = await api.call('DELETE', `/v1/webhook_endpoints/${made[0]}`, { apiKey });
    expect(removed.status).toBe(200);
    const again = await race(apiKey, 20);
    expect(again.made).toHaveLength(1);
    expectRefusedAsFull(again.refused);
    expect(await listed(apiKey)).toHaveLength(LIMIT);
  });

  it('endpoints made before places were kept (an older data folder) count against the limit', async () => {
    const partner = await api.createPartner('Older');
    // What the service wrote before: each endpoint on its own stream only, none on the partner's.
    const store = api.get(EventStore);
    for (let i = 0; i < 5; i++) {
      const endpointId = `we_older${i}`;
      await handleCommand(
        store,
        webhookEndpointStream(endpointId),
        webhookEndpointDecider,
        {
          type: 'CreateWebhookEndpoint',
          data: {
            endpointId,
            partnerId: partner.partnerId,
            url: `https://127.0.0.1/older/${i}`,
            description: '',
            types: ['*'],
            enabled: true,
            secretSalt: `salt${i}`,
          },
        },
        as(partner.partnerId),
      );
    }
    await api.settle();
    expect(await listed(partner.apiKey)).toHaveLength(5);
    const { made, refused } = await race(partner.apiKey, 40);
    expect(made).toHaveLength(LIMIT - 5);
    expectRefusedAsFull(refused);
    expect(await listed(partner.apiKey)).toHaveLength(LIMIT);
  });

  it('a place whose endpoint was never made (stopped between the two appends) is freed by a registration finding the partner full, once it is stale', async () => {
    const { partnerId, apiKey } = await api.createPartner('Stopped creating');
    expect((await race(apiKey, LIMIT - 1)).made).toHaveLength(LIMIT - 1);
    // The creation that stopped: its place taken, its endpoint never made.
    const store = api.get(EventStore);
    const stalled = 'we_stalled';
    await handleCommand(
      store,
      webhookEndpointPlacesStream(partnerId),
      webhookEndpointPlacesDecider,
      { type: 'TakeEndpointPlace', data: { partnerId, endpointId: stalled, earlier: null } },
      as(partnerId),
    );
    // Its creation may still be under way: the place counts.
    expectRefusedAsFull([await register(apiKey, 100)]);
    clock.advance(UNMADE_PLACE_MS);
    const { made, refused } = await race(apiKey, 10);
    expect(made).toHaveLength(1);
    expectRefusedAsFull(refused);
    // Abandoned first, so the stalled creation can no longer make it: the place went to one endpoint only.
    expect((await loadAggregate(store, webhookEndpointStream(stalled), webhookEndpointDecider)).state.status).toBe('abandoned');
    await expect(
      handleCommand(
        store,
        webhookEndpointStream(stalled),
        webhookEndpointDecider,
        {
          type: 'CreateWebhookEndpoint',
          data: {
            endpointId: stalled,
            partnerId,
            url: 'https://127.0.0.1/late',
            description: '',
            types: ['*'],
            enabled: true,
            secretSalt: 's',
          },
        },
        as(partnerId),
      ),
    ).rejects.toThrow('abandoned');
    expect(await listed(apiKey)).toHaveLength(LIMIT);
  });

  it('a deleted endpoint whose place was not freed (stopped between the two appends) gives it to the next registration finding the partner full', async () => {
    const { partnerId, apiKey } = await api.createPartner('Stopped deleting');
    const { made } = await race(apiKey, LIMIT);
    expect(made).toHaveLength(LIMIT);
    // The deletion that stopped: the endpoint deleted on its stream, its place not freed.
    await handleCommand(
      api.get(EventStore),
      webhookEndpointStream(made[3]),
      webhookEndpointDecider,
      { type: 'DeleteWebhookEndpoint', data: { endpointId: made[3], partnerId } },
      as(partnerId),
    );
    await api.settle();
    expect(await listed(apiKey)).toHaveLength(LIMIT - 1);
    const again = await race(apiKey, 10);
    expect(again.made).toHaveLength(1);
    expectRefusedAsFull(again.refused);
    expect(await listed(apiKey)).toHaveLength(LIMIT);
  });

  it('holds after a restart and a rebuild of the views: the places are in the log', async () => {
    const { apiKey } = await api.createPartner('Rebuilt');
    const { made } = await race(apiKey, 30);
    expect(made).toHaveLength(LIMIT);
    await api.stop();
    const rebuilt = await runCli(dir.path, ['projections:rebuild', 'webhook_endpoints']);
    expect(rebuilt.code).toBe(0);
    api = await TestApi.start({ clock, dataDir: dir.path, env });
    expect((await listed(apiKey)).map((e) => e.id).sort()).toEqual([...made].sort());
    const { refused } = await race(apiKey, 5);
    expect(refused).toHaveLength(5);
    expectRefusedAsFull(refused);
  });
});
