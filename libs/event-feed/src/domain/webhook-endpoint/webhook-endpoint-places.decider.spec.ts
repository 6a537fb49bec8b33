import { fold, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import {
  EndpointPlacesCommand,
  MAX_ENDPOINTS,
  placeOutcome,
  UNMADE_PLACE_MS,
  webhookEndpointPlacesDecider,
} from './webhook-endpoint-places.decider';
import { webhookEndpointDecider } from './webhook-endpoint.decider';
import type { WebhookEndpointEvent, WebhookEndpointPlacesEvent } from './webhook-endpoint.events';

const now = new Date('2026-06-15T12:00:00Z');
const at = now.toISOString();
const places = deciderSpec(webhookEndpointPlacesDecider);
const take = (endpointId: string, earlier: string[] | null = null): EndpointPlacesCommand => ({
  type: 'TakeEndpointPlace',
  data: { partnerId: 'p1', endpointId, earlier },
});
const free = (endpointId: string): EndpointPlacesCommand => ({ type: 'FreeEndpointPlace', data: { partnerId: 'p1', endpointId } });
const counted = (endpointIds: string[] = []): WebhookEndpointPlacesEvent => ({
  type: 'WebhookEndpointsCounted',
  data: { partnerId: 'p1', endpointIds, countedAt: at },
});
const taken = (endpointId: string): WebhookEndpointPlacesEvent => ({
  type: 'WebhookEndpointPlaceTaken',
  data: { partnerId: 'p1', endpointId, takenAt: at },
});
const freed = (endpointId: string): WebhookEndpointPlacesEvent => ({
  type: 'WebhookEndpointPlaceFreed',
  data: { partnerId: 'p1', endpointId, freedAt: at },
});
const ids = (count: number, prefix = 'we_') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
const full = [counted(), ...ids(MAX_ENDPOINTS).map(taken)];
const LIMIT_REACHED = {
  issues: [{ type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: `a partner has at most ${MAX_ENDPOINTS} endpoints` }],
};

describe("a partner's webhook endpoint places", () => {
  it('gives a place to each new endpoint up to the limit, then refuses with the documented issue', () => {
    places([counted(), ...ids(MAX_ENDPOINTS - 1).map(taken)])
      .when(take('we_new'), now)
      .then([taken('we_new')]);
    places(full).when(take('we_new'), now).thenThrows(ValidationFailed, LIMIT_REACHED);
  });

  it('decides registrations one after the other as the stream does: of 60 at once, 16 take a place', () => {
    let state = fold(webhookEndpointPlacesDecider, [counted()]);
    let made = 0;
    let refused = 0;
    for (const id of ids(60)) {
      try {
        for (const event of webhookEndpointPlacesDecider.decide(take(id), state, now))
          state = webhookEndpointPlacesDecider.evolve(state, event);
        made++;
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationFailed);
        refused++;
      }
    }
    expect([made, refused, state.held.size]).toEqual([MAX_ENDPOINTS, 60 - MAX_ENDPOINTS, MAX_ENDPOINTS]);
  });

  it("frees a deleted endpoint's place for one new endpoint", () => {
    places(full)
      .when(free('we_3'), now)
      .then([freed('we_3')]);
    places([...full, freed('we_3')])
      .when(take('we_new'), now)
      .then([taken('we_new')]);
    places([...full, freed('we_3'), taken('we_new')])
      .when(take('we_other'), now)
      .thenThrows(ValidationFailed, LIMIT_REACHED);
  });

  it('takes nothing twice and frees nothing it does not hold: a retried decision writes nothing', () => {
    places(full).when(take('we_3'), now).then([]);
    places([counted()]).when(free('we_unknown'), now).then([]);
    places([]).when(free('we_older'), now).then([]);
  });

  it('counts the endpoints made before places were kept with its first decision', () => {
    places([])
      .when(take('we_new', ['we_a', 'we_b', 'we_a']), now)
      .then([counted(['we_a', 'we_b']), taken('we_new')]);
    const older = ids(MAX_ENDPOINTS - 1, 'we_old');
    places([])
      .when(take('we_new', older), now)
      .then([counted(older), taken('we_new')]);
  });

  it('refuses a partner whose endpoints made before places were kept already fill its places (or more)', () => {
    places([])
      .when(take('we_new', ids(MAX_ENDPOINTS, 'we_old')), now)
      .thenThrows(ValidationFailed, LIMIT_REACHED);
    places([])
      .when(take('we_new', ids(60, 'we_old')), now)
      .thenThrows(ValidationFailed, LIMIT_REACHED);
  });

  it('counts once: a list brought by a decision made after another counted is ignored', () => {
    places([counted(['we_a']), taken('we_b')])
      .when(take('we_c', ['we_a', 'we_x', 'we_y']), now)
      .then([taken('we_c')]);
  });

  it('refuses to decide uncounted without the list (a caller that read the stream wrong)', () => {
    places([]).when(take('we_new', null), now).thenThrows(Error);
  });

  it('frees a counted endpoint once it is deleted', () => {
    places([counted(['we_a'])])
      .when(free('we_a'), now)
      .then([freed('we_a')]);
  });
});

describe('what becomes of a place, from its endpoint', () => {
  const created: WebhookEndpointEvent = {
    type: 'WebhookEndpointCreated',
    data: {
      endpointId: 'we_1',
      partnerId: 'p1',
      url: 'https://h.example/x',
      description: '',
      types: ['*'],
      enabled: true,
      secretSalt: 's',
      createdAt: at,
    },
  };
  const endpoint = (...events: WebhookEndpointEvent[]) => fold(webhookEndpointDecider, events);
  const later = (ms: number) => new Date(now.getTime() + ms);

  it('keeps the place of a live endpoint, however old', () => {
    expect(placeOutcome(endpoint(created), at, later(10 * UNMADE_PLACE_MS))).toBe('keep');
  });

  it('frees the place of a deleted or abandoned endpoint', () => {
    const deleted: WebhookEndpointEvent = { type: 'WebhookEndpointDeleted', data: { endpointId: 'we_1', partnerId: 'p1', deletedAt: at } };
    const abandoned: WebhookEndpointEvent = { type: 'WebhookEndpointAbandoned', data: { endpointId: 'we_1', partnerId: 'p1', at } };
    expect(placeOutcome(endpoint(created, deleted), at, now)).toBe('free');
    expect(placeOutcome(endpoint(abandoned), at, now)).toBe('free');
  });

  it('keeps the place of an endpoint not made yet while its creation may be under way, then abandons it', () => {
    expect(placeOutcome(endpoint(), at, later(UNMADE_PLACE_MS - 1))).toBe('keep');
    expect(placeOutcome(endpoint(), at, later(UNMADE_PLACE_MS))).toBe('abandon');
  });
});

describe('an abandoned webhook endpoint', () => {
  const endpoints = deciderSpec(webhookEndpointDecider);
  const abandoned: WebhookEndpointEvent = { type: 'WebhookEndpointAbandoned', data: { endpointId: 'we_1', partnerId: 'p1', at } };
  const terms = {
    endpointId: 'we_1',
    partnerId: 'p1',
    url: 'https://h.example/x',
    description: '',
    types: ['*'],
    enabled: true,
    secretSalt: 's',
  };

  it('is abandoned only while not made', () => {
    endpoints([])
      .when({ type: 'AbandonWebhookEndpoint', data: { endpointId: 'we_1', partnerId: 'p1' } }, now)
      .then([abandoned]);
    endpoints([{ type: 'WebhookEndpointCreated', data: { ...terms, createdAt: at } }])
      .when({ type: 'AbandonWebhookEndpoint', data: { endpointId: 'we_1', partnerId: 'p1' } }, now)
      .then([]);
    endpoints([abandoned])
      .when({ type: 'AbandonWebhookEndpoint', data: { endpointId: 'we_1', partnerId: 'p1' } }, now)
      .then([]);
  });

  it('is never made: its place is gone', () => {
    endpoints([abandoned]).when({ type: 'CreateWebhookEndpoint', data: terms }, now).thenThrows(Error);
  });
});
