import { NotFound, ValidationFailed, ViewProgress } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Caller, CurrentCaller, RequestParameters, CalledBy, PARTNERS } from '@deals/wire';
import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { WebhookEndpointWrites } from '../commands/webhook-endpoint-writes';
import { EVENT_FEED } from '../projections/event-feed/event-feed.projection';
import { EventFeedQueries } from '../queries/event-feed.queries';
import { WebhookEndpointQueries } from '../queries/webhook-endpoint.queries';
import { DeliveryListAnswer, EventAnswer, EventListAnswer, toDelivery } from './events.answers';
import { EventListQuery, EventPathParams, RedeliverBody } from './events.request';
import { FeedRenderer } from './feed-renderer';

/** The partner event feed: every event of the partner's resources since its first, in log order (issue 37). */
@ApiTags('events')
@Controller('v1/events')
export class EventsController {
  constructor(
    private readonly feed: EventFeedQueries,
    private readonly endpoints: WebhookEndpointQueries,
    private readonly writes: WebhookEndpointWrites,
    private readonly renderer: FeedRenderer,
    private readonly progress: ViewProgress,
  ) {}

  @Get()
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "The partner's events",
    description:
      'Every event of the partner since its first, in log order, a page at a time: `after` (the `next_cursor` of the page before), ' +
      '`types` (comma-separated), `resource_id`, `per_page` (1-1000, default 100). Kept for ever; a rebuild makes the same events with the same ids.',
  })
  @ApiAnswer(EventListAnswer, { errors: [422] })
  @ApiRequest({ query: EventListQuery })
  async list(@RequestParameters() query: EventListQuery, @CurrentCaller() caller: Caller) {
    const { after, types, resourceId, perPage } = query;
    let afterOrder: string | null = null;
    if (after !== null) {
      const from = await this.feed.event(caller.partnerId, after);
      if (!from)
        throw new ValidationFailed([{ type: 'invalid', resource: 'event', field: 'after', message: 'names no event of this partner' }]);
      afterOrder = from.order;
    }
    const page = await this.feed.page(caller.partnerId, { afterOrder, types, resourceId, limit: perPage + 1 });
    const events = page.slice(0, perPage);
    return {
      status: 'success',
      events: await Promise.all(events.map((e) => this.renderer.render(e))),
      has_more: page.length > perPage,
      next_cursor: events.length ? events[events.length - 1]._id : after,
    };
  }

  @Get(':event_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: 'One event', description: 'The event with its resource as it was then.' })
  @ApiAnswer(EventAnswer, { errors: [404] })
  @ApiRequest({ params: EventPathParams })
  async one(@Param() path: EventPathParams, @CurrentCaller() caller: Caller) {
    return { status: 'success', event: await this.renderer.render(await this.found(caller, path.event_id)) };
  }

  @Get(':event_id/attempts')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "An event's deliveries",
    description: 'Each delivery of the event to an endpoint, with every attempt: time, status, latency, the first bytes of the answer.',
  })
  @ApiAnswer(DeliveryListAnswer, { errors: [404] })
  @ApiRequest({ params: EventPathParams })
  async attempts(@Param() path: EventPathParams, @CurrentCaller() caller: Caller) {
    await this.found(caller, path.event_id);
    return { status: 'success', deliveries: (await this.feed.deliveriesOfEvent(caller.partnerId, path.event_id)).map(toDelivery) };
  }

  @Post(':event_id/redeliver')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send an event again',
    description:
      'To `endpoint_id`, or to every enabled endpoint listening for its type: a new delivery with its own attempts (the same `webhook-id`).',
  })
  @ApiAnswer(DeliveryListAnswer, { errors: [404, 422] })
  @ApiRequest({ params: EventPathParams, body: RedeliverBody })
  async redeliver(@Param() path: EventPathParams, @RequestParameters() body: RedeliverBody, @CurrentCaller() caller: Caller) {
    const event = await this.found(caller, path.event_id);
    const { endpointId } = body;
    let targets: string[];
    if (endpointId !== null) {
      if (!(await this.endpoints.endpoint(caller.partnerId, endpointId)))
        throw new ValidationFailed([
          { type: 'not_found', resource: 'webhook_endpoint', field: 'endpoint_id', message: 'names no endpoint of this partner' },
        ]);
      targets = [endpointId];
    } else {
      targets = (await this.endpoints.ofPartner(caller.partnerId))
        .filter((e) => e.enabled && (e.types.includes('*') || e.types.includes(event.type)))
        .map((e) => e._id);
    }
    const before = new Set((await this.feed.deliveriesOfEvent(caller.partnerId, event._id)).map((d) => d._id));
    for (const target of targets) {
      const position = await this.writes.redeliver(target, [event._id], caller);
      await this.progress.waitFor([EVENT_FEED], position);
    }
    const deliveries = (await this.feed.deliveriesOfEvent(caller.partnerId, event._id)).filter((d) => !before.has(d._id));
    return { status: 'success', deliveries: deliveries.map(toDelivery) };
  }

  private async found(caller: Caller, eventId: string) {
    const event = await this.feed.event(caller.partnerId, eventId);
    if (!event) throw new NotFound('event not found');
    return event;
  }
}
