import { Decider, DomainCommand, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import type { WebhookEndpoint } from './webhook-endpoint.decider';
import type { WebhookEndpointPlacesEvent } from './webhook-endpoint.events';

/** A partner's endpoints at most (Stripe's limit). */
export const MAX_ENDPOINTS = 16;
/**
 * How long a place may wait for its endpoint to be made before it may be given up: far beyond the
 * moment between the two appends of a creation, so only a creation that stopped midway loses it.
 */
export const UNMADE_PLACE_MS = 60_000;

/**
 * `earlier`: the partner's live endpoints made before places were kept, when the caller found the
 * stream not counted yet (null otherwise); ignored once the stream is counted.
 */
export type TakeEndpointPlace = DomainCommand<
  'TakeEndpointPlace',
  { partnerId: string; endpointId: string; earlier: readonly string[] | null }
>;
export type FreeEndpointPlace = DomainCommand<'FreeEndpointPlace', { partnerId: string; endpointId: string }>;
export type EndpointPlacesCommand = TakeEndpointPlace | FreeEndpointPlace;

/** A partner's webhook endpoint places: the endpoints holding one, each with when it took it. */
export interface EndpointPlaces {
  /** Whether the endpoints made before places were kept have been counted (by the stream's first decision). */
  counted: boolean;
  /** A persistent map: the state is shared by a stream's commands. */
  held: ImmutableMap<string, string>;
}

/** The refusal of a partner at its limit. */
export const endpointLimitReached = () =>
  new ValidationFailed([
    { type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: `a partner has at most ${MAX_ENDPOINTS} endpoints` },
  ]);

/**
 * How many webhook endpoints a partner has, decided on its own stream: an endpoint is made only
 * once it holds a place here, so two registrations at once never both take the last place, in one
 * process or several (the append's expected revision). Deleting an endpoint frees its place. The
 * first decision also counts the endpoints made before places were kept, so they hold places too.
 */
export const webhookEndpointPlacesDecider: Decider<EndpointPlaces, EndpointPlacesCommand, WebhookEndpointPlacesEvent> = {
  initialState: () => ({ counted: false, held: ImmutableMap() }),
  decide(command, places, now) {
    const at = now.toISOString();
    const { partnerId, endpointId } = command.data;
    switch (command.type) {
      case 'TakeEndpointPlace': {
        if (places.held.has(endpointId)) return [];
        const events: WebhookEndpointPlacesEvent[] = [];
        let held = places.held.size;
        if (!places.counted) {
          // The caller saw the stream counted: counted it stays, so this is a caller's mistake.
          if (command.data.earlier === null) throw new Error(`the webhook endpoint places of partner ${partnerId} are not counted yet`);
          const endpointIds = [...new Set(command.data.earlier)].filter((id) => id !== endpointId && !places.held.has(id));
          events.push({ type: 'WebhookEndpointsCounted', data: { partnerId, endpointIds, countedAt: at } });
          held += endpointIds.length;
        }
        if (held >= MAX_ENDPOINTS) throw endpointLimitReached();
        events.push({ type: 'WebhookEndpointPlaceTaken', data: { partnerId, endpointId, takenAt: at } });
        return events;
      }
      case 'FreeEndpointPlace':
        return places.held.has(endpointId) ? [{ type: 'WebhookEndpointPlaceFreed', data: { partnerId, endpointId, freedAt: at } }] : [];
      default:
        return unknownCommand(command);
    }
  },
  evolve(places, event) {
    switch (event.type) {
      case 'WebhookEndpointsCounted': {
        let held = places.held;
        for (const id of event.data.endpointIds) held = held.set(id, event.data.countedAt);
        return { counted: true, held };
      }
      case 'WebhookEndpointPlaceTaken':
        return { ...places, held: places.held.set(event.data.endpointId, event.data.takenAt) };
      case 'WebhookEndpointPlaceFreed':
        return { ...places, held: places.held.delete(event.data.endpointId) };
      default:
        return ignoredEvent(event, places);
    }
  },
};

/**
 * What becomes of a place, from its endpoint's stream: kept while the endpoint holds it (made, or
 * being made); freed once it is deleted or abandoned; an endpoint still not made `UNMADE_PLACE_MS`
 * after its place was taken is to be abandoned first (its creation stopped midway), then freed.
 */
export function placeOutcome(endpoint: WebhookEndpoint, takenAt: string, now: Date): 'keep' | 'free' | 'abandon' {
  if (endpoint.status === 'deleted' || endpoint.status === 'abandoned') return 'free';
  if (endpoint.status === 'live' || now.getTime() - Date.parse(takenAt) < UNMADE_PLACE_MS) return 'keep';
  return 'abandon';
}
