import { NotFound, ValidationFailed, ViewProgress } from '@deals/kernel';
import {
  answerRepeatsWithoutSecret,
  ApiAnswer,
  ApiRequest,
  AuthenticatedRequest,
  AuthRequest,
  Caller,
  CurrentCaller,
  NotUnderTestClock,
  RequestParameters,
  CalledBy,
  PARTNERS,
  NoBody,
} from '@deals/wire';
import { Controller, Delete, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { WebhookEndpointWrites } from '../commands/webhook-endpoint-writes';
import { MAX_ENDPOINTS } from '../domain/webhook-endpoint/webhook-endpoint-places.decider';
import { WebhookSecrets } from '../delivery/webhook-secrets';
import { EVENT_FEED } from '../projections/event-feed/event-feed.projection';
import { WEBHOOK_ENDPOINTS, WebhookEndpointView } from '../projections/webhook-endpoints/webhook-endpoints.projection';
import { EventFeedQueries } from '../queries/event-feed.queries';
import { WebhookEndpointQueries } from '../queries/webhook-endpoint.queries';
import { DeliveryListAnswer, toDelivery } from './events.answers';
import { EndpointAnswer, EndpointListAnswer, EndpointWithSecretAnswer, ReplayAnswer, toEndpoint } from './webhook-endpoints.answers';
import { CreateEndpointBody, DeliveryListQuery, EndpointPathParams, ReplayBody, UpdateEndpointBody } from './webhook-endpoints.request';

const REPLAY_MAX = 1000;

/** A partner's webhook endpoints: where its events are sent, signed as Standard Webhooks says (issue 37). */
@ApiTags('webhooks')
@UseGuards(NotUnderTestClock)
@Controller('v1/webhook_endpoints')
export class WebhookEndpointsController {
  constructor(
    private readonly writes: WebhookEndpointWrites,
    private readonly endpoints: WebhookEndpointQueries,
    private readonly feed: EventFeedQueries,
    private readonly secrets: WebhookSecrets,
    private readonly progress: ViewProgress,
  ) {}

  @Post()
  @CalledBy(...PARTNERS)
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register a webhook endpoint',
    description: `An https URL and the event types it wants (or "*"). Answers its signing secret, this once. At most ${MAX_ENDPOINTS} a partner.`,
  })
  @ApiAnswer(EndpointWithSecretAnswer, { status: 201, errors: [422] })
  @ApiRequest({ body: CreateEndpointBody })
  async create(
    @RequestParameters() body: CreateEndpointBody,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    const { endpointId, position } = await this.writes.create(body, caller);
    const endpoint = await this.read(caller, endpointId, position);
    answerRepeatsWithoutSecret(request);
    return {
      status: 'success',
      webhook_endpoint: toEndpoint(endpoint),
      secret: this.secrets.secretOf(endpoint._id, endpoint.salts[0].salt),
    };
  }

  @Get()
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "The partner's webhook endpoints",
    description: 'Every endpoint the partner registered and has not removed, oldest first.',
  })
  @ApiAnswer(EndpointListAnswer)
  async list(@CurrentCaller() caller: Caller) {
    return { status: 'success', webhook_endpoints: (await this.endpoints.ofPartner(caller.partnerId)).map(toEndpoint) };
  }

  @Get(':endpoint_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: 'A webhook endpoint',
    description: 'Its url, event types, state, and why the service disabled it, if it did (never its secret).',
  })
  @ApiAnswer(EndpointAnswer, { errors: [404] })
  @ApiRequest({ params: EndpointPathParams })
  async one(@Param() path: EndpointPathParams, @CurrentCaller() caller: Caller) {
    return { status: 'success', webhook_endpoint: toEndpoint(await this.found(caller, path.endpoint_id)) };
  }

  @Put(':endpoint_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: 'Change a webhook endpoint',
    description:
      'Its url, types, description; `enabled` false stops its deliveries, true starts them again (one the service disabled too).',
  })
  @ApiAnswer(EndpointAnswer, { errors: [404, 422] })
  @ApiRequest({ params: EndpointPathParams, body: UpdateEndpointBody })
  async update(@Param() path: EndpointPathParams, @RequestParameters() body: UpdateEndpointBody, @CurrentCaller() caller: Caller) {
    await this.found(caller, path.endpoint_id);
    const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    const position = await this.writes.update(path.endpoint_id, changes, caller);
    return { status: 'success', webhook_endpoint: toEndpoint(await this.read(caller, path.endpoint_id, position)) };
  }

  @Delete(':endpoint_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: 'Remove a webhook endpoint', description: 'Nothing more is sent to it, retries included.' })
  @ApiAnswer(EndpointAnswer, { errors: [404] })
  @ApiRequest({ params: EndpointPathParams })
  async remove(@Param() path: EndpointPathParams, @NoBody() _body: void, @CurrentCaller() caller: Caller) {
    const endpoint = await this.found(caller, path.endpoint_id);
    const position = await this.writes.delete(path.endpoint_id, caller);
    await this.progress.waitFor([WEBHOOK_ENDPOINTS, EVENT_FEED], position);
    return { status: 'success', webhook_endpoint: { ...toEndpoint(endpoint), enabled: false } };
  }

  @Post(':endpoint_id/rotate_secret')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: "Replace an endpoint's signing secret",
    description:
      'Answers the new secret, this once; for 24 hours every delivery is signed with both (two `v1,` signatures), then with the new one only.',
  })
  @ApiAnswer(EndpointWithSecretAnswer, { errors: [404] })
  @ApiRequest({ params: EndpointPathParams })
  async rotate(
    @Param() path: EndpointPathParams,
    @NoBody() _body: void,
    @CurrentCaller() caller: Caller,
    @AuthRequest() request: AuthenticatedRequest,
  ) {
    await this.found(caller, path.endpoint_id);
    const position = await this.writes.rotateSecret(path.endpoint_id, caller);
    const endpoint = await this.read(caller, path.endpoint_id, position);
    answerRepeatsWithoutSecret(request);
    return {
      status: 'success',
      webhook_endpoint: toEndpoint(endpoint),
      secret: this.secrets.secretOf(endpoint._id, endpoint.salts[0].salt),
    };
  }

  @Get(':endpoint_id/deliveries')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "An endpoint's deliveries",
    description: 'Latest first, each with every attempt: time, status, latency, the first bytes of the answer.',
  })
  @ApiAnswer(DeliveryListAnswer, { errors: [404, 422] })
  @ApiRequest({ params: EndpointPathParams, query: DeliveryListQuery })
  async deliveries(@Param() path: EndpointPathParams, @RequestParameters() query: DeliveryListQuery, @CurrentCaller() caller: Caller) {
    await this.found(caller, path.endpoint_id);
    const { perPage, page } = query;
    const deliveries = await this.feed.deliveriesOfEndpoint(path.endpoint_id, (page - 1) * perPage, perPage);
    return { status: 'success', deliveries: deliveries.map(toDelivery) };
  }

  @Post(':endpoint_id/replay')
  @CalledBy(...PARTNERS)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send a range of events again',
    description: `The endpoint's types of events after \`after\` up to \`until\` (event ids), oldest first, at most ${REPLAY_MAX} a call: each a new delivery.`,
  })
  @ApiAnswer(ReplayAnswer, { errors: [404, 422] })
  @ApiRequest({ params: EndpointPathParams, body: ReplayBody })
  async replay(@Param() path: EndpointPathParams, @RequestParameters() body: ReplayBody, @CurrentCaller() caller: Caller) {
    const endpoint = await this.found(caller, path.endpoint_id);
    const { after, until } = body;
    const order = async (eventId: string | null, field: string) => {
      if (eventId === null) return null;
      const event = await this.feed.event(caller.partnerId, eventId);
      if (!event) throw new ValidationFailed([{ type: 'invalid', resource: 'event', field, message: 'names no event of this partner' }]);
      return event.order;
    };
    const events = await this.feed.range(
      caller.partnerId,
      await order(after, 'after'),
      await order(until, 'until'),
      endpoint.types,
      REPLAY_MAX + 1,
    );
    const queued = events.slice(0, REPLAY_MAX);
    if (queued.length) {
      const position = await this.writes.redeliver(
        endpoint._id,
        queued.map((e) => e._id),
        caller,
      );
      await this.progress.waitFor([EVENT_FEED], position);
    }
    return {
      status: 'success',
      queued: queued.length,
      next_cursor: queued.length ? queued[queued.length - 1]._id : null,
      has_more: events.length > REPLAY_MAX,
    };
  }

  private async found(caller: Caller, endpointId: string): Promise<WebhookEndpointView> {
    const endpoint = await this.endpoints.endpoint(caller.partnerId, endpointId);
    if (!endpoint) throw new NotFound('webhook endpoint not found');
    return endpoint;
  }

  private async read(caller: Caller, endpointId: string, position: Parameters<ViewProgress['waitFor']>[1]): Promise<WebhookEndpointView> {
    await this.progress.waitFor([WEBHOOK_ENDPOINTS], position);
    return this.found(caller, endpointId);
  }
}
