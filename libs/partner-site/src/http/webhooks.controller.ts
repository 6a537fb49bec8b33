import {
  EVENT_FEED,
  EventFeedQueries,
  FEED_EVENT_TYPES,
  MAX_ENDPOINTS,
  MAX_WEBHOOK_URL_LENGTH,
  PREVIOUS_SECRET_MS,
  WEBHOOK_ENDPOINTS,
  WebhookDelivery,
  WebhookEndpointQueries,
  WebhookEndpointView,
  WebhookEndpointWrites,
  WebhookSecrets,
} from '@deals/event-feed';
import { Clock, NotFound, PartnerCaller, ValidationFailed, ViewProgress } from '@deals/kernel';
import { humanUtc } from '@deals/wire';
import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { field, shownBack } from './form-fields';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { accountCaller, CurrentMember, issueTexts, SitePageErrors } from './site-request';

const DESCRIPTION_MAX = 500;
/** Deliveries a page of an endpoint's deliveries shows, and events a page of events. */
const DELIVERIES_PER_PAGE = 20;
const EVENTS_PER_PAGE = 50;
/** How much of a receiver's answer a delivery's row shows (the feed keeps up to 1,024 bytes). */
const ANSWER_SHOWN = 200;
/** Longer than any id the service makes: such a path names nothing (and is not looked up). */
const MAX_ID = 128;

const NOTICES: Record<string, string> = {
  enabled: 'The endpoint is enabled: events are sent to it again.',
  disabled: 'The endpoint is disabled: nothing is sent to it until you enable it.',
  removed: 'The endpoint is removed: nothing more is sent to it, retries included.',
};

/** The texts of the state of an endpoint, as its row shows them. */
function stateOf(endpoint: WebhookEndpointView): { state: string; why: string | null } {
  if (endpoint.enabled) return { state: 'enabled', why: null };
  if (endpoint.disabledReason === 'gone') return { state: 'disabled', why: 'by the service: your receiver answered 410 Gone' };
  if (endpoint.disabledReason === 'failing') return { state: 'disabled', why: 'by the service: every delivery failed for 5 days' };
  return { state: 'disabled', why: 'by your team' };
}

const endpointRow = (endpoint: WebhookEndpointView) => ({
  id: endpoint._id,
  url: endpoint.url,
  description: endpoint.description,
  types: endpoint.types.includes('*') ? 'all types' : endpoint.types.join(', '),
  enabled: endpoint.enabled,
  ...stateOf(endpoint),
  failingSince: endpoint.failingSince && humanUtc(endpoint.failingSince),
  createdAt: humanUtc(endpoint.createdAt),
});

const deliveryRows = (delivery: WebhookDelivery) => {
  const attempts = delivery.attempts.map((a) => ({
    attempt: a.attempt,
    at: humanUtc(a.at),
    status: a.status === null ? 'no answer' : String(a.status),
    ok: a.status !== null && a.status >= 200 && a.status < 300,
    latency: `${a.latencyMs} ms`,
    answer: a.responseExcerpt.length > ANSWER_SHOWN ? `${a.responseExcerpt.slice(0, ANSWER_SHOWN)}…` : a.responseExcerpt,
    error: a.error,
  }));
  return {
    id: delivery._id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    nextAttemptAt: delivery.nextAttemptAt && humanUtc(delivery.nextAttemptAt),
    rows: Math.max(1, attempts.length),
    first: attempts[0] ?? null,
    rest: attempts.slice(1),
  };
};

/** The form's event types: every known type, checked as asked. */
const typeChoices = (checked: ReadonlySet<string>) => FEED_EVENT_TYPES.map((type) => ({ type, checked: checked.has(type) }));

/**
 * The partner's webhook endpoints (issue 37) on the site: list, register (its secret shown once),
 * enable, disable, rotate the secret (the new one shown once), remove; an endpoint's deliveries with
 * each attempt, an event sent again; the partner's latest events. Every change goes through the
 * feed's `WebhookEndpointWrites`, as the API's do, with the member as the actor.
 */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner')
export class WebhooksController {
  constructor(
    private readonly pages: SitePages,
    private readonly writes: WebhookEndpointWrites,
    private readonly endpoints: WebhookEndpointQueries,
    private readonly feed: EventFeedQueries,
    private readonly secrets: WebhookSecrets,
    private readonly progress: ViewProgress,
    private readonly clock: Clock,
  ) {}

  @Get('webhooks')
  async list(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Query('done') done?: string,
  ) {
    const notice = typeof done === 'string' && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined;
    return this.listPage(request, reply, member, { notice, form: { url: '', description: '', all: true, types: typeChoices(new Set()) } });
  }

  @Post('webhooks')
  async register(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Body() body: unknown) {
    const url = field(body, 'url').trim();
    const description = field(body, 'description').trim();
    const all = field(body, 'all') === 'on';
    const chosen = FEED_EVENT_TYPES.filter((type) => field(body, `type_${type}`) === 'on');
    // Shown back at most as long as each field may be.
    const form = {
      url: shownBack(url, MAX_WEBHOOK_URL_LENGTH),
      description: shownBack(description, DESCRIPTION_MAX),
      all,
      types: typeChoices(new Set(chosen)),
    };
    const problems: string[] = [];
    if (!url) problems.push('url is required');
    if (description.length > DESCRIPTION_MAX) problems.push(`description must be at most ${DESCRIPTION_MAX} characters`);
    if (!all && chosen.length === 0) problems.push('event types: choose at least one, or all');
    if (problems.length) return this.listPage(request, reply, member, { errors: problems, form }, 422);
    let created: Awaited<ReturnType<WebhookEndpointWrites['create']>>;
    try {
      created = await this.writes.create({ url, description, types: all ? ['*'] : chosen, enabled: true }, this.caller(request, member));
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      return this.listPage(request, reply, member, { errors: issueTexts(error), form }, 422);
    }
    const endpoint = await this.read(member, created.endpointId, created.position);
    const model = {
      title: 'New webhook endpoint',
      endpoint: endpointRow(endpoint),
      secret: this.secrets.secretOf(endpoint._id, endpoint.salts[0].salt),
    };
    return this.pages.sendSecretOnce(request, reply, 'webhook-secret', model, { ...model, secret: null, shownBefore: true });
  }

  @Post('webhooks/:endpointId/enable')
  enable(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('endpointId') endpointId: string,
  ) {
    return this.setEnabled(request, reply, member, endpointId, true);
  }

  @Post('webhooks/:endpointId/disable')
  disable(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('endpointId') endpointId: string,
  ) {
    return this.setEnabled(request, reply, member, endpointId, false);
  }

  @Post('webhooks/:endpointId/rotate')
  async rotate(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('endpointId') endpointId: string,
  ) {
    await this.found(member, endpointId);
    const position = await this.writes.rotateSecret(endpointId, this.caller(request, member));
    const endpoint = await this.read(member, endpointId, position);
    const previousUntil = endpoint.salts[1]?.until ?? new Date(this.clock.now().getTime() + PREVIOUS_SECRET_MS).toISOString();
    const model = {
      title: 'New signing secret',
      endpoint: endpointRow(endpoint),
      secret: this.secrets.secretOf(endpoint._id, endpoint.salts[0].salt),
      previousUntil: humanUtc(previousUntil),
    };
    return this.pages.sendSecretOnce(request, reply, 'webhook-secret', model, { ...model, secret: null, shownBefore: true });
  }

  @Post('webhooks/:endpointId/remove')
  async remove(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('endpointId') endpointId: string,
  ) {
    await this.found(member, endpointId);
    const position = await this.writes.delete(endpointId, this.caller(request, member));
    await this.progress.waitFor([WEBHOOK_ENDPOINTS, EVENT_FEED], position);
    return reply.redirect('/partner/webhooks?done=removed', 303);
  }

  @Get('webhooks/:endpointId')
  async deliveries(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('endpointId') endpointId: string,
    @Query('page') pageText?: string,
    @Query('sent') sent?: string,
  ) {
    const endpoint = await this.found(member, endpointId);
    const page = typeof pageText === 'string' && /^[1-9][0-9]{0,5}$/.test(pageText) ? Number(pageText) : 1;
    const found = await this.feed.deliveriesOfEndpoint(endpointId, (page - 1) * DELIVERIES_PER_PAGE, DELIVERIES_PER_PAGE + 1);
    return this.pages.send(request, reply, 'webhook-deliveries', {
      title: 'Webhook deliveries',
      notice:
        sent === '1'
          ? 'The event is sent again: its new delivery is listed with its earlier ones (deliveries are listed in the order of their events).'
          : undefined,
      endpoint: endpointRow(endpoint),
      deliveries: found.slice(0, DELIVERIES_PER_PAGE).map(deliveryRows),
      newer: page > 1 ? `/partner/webhooks/${endpoint._id}${page > 2 ? `?page=${page - 1}` : ''}` : null,
      older: found.length > DELIVERIES_PER_PAGE ? `/partner/webhooks/${endpoint._id}?page=${page + 1}` : null,
    });
  }

  @Post('webhooks/:endpointId/redeliver')
  async redeliver(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const endpoint = await this.found(member, endpointId);
    const eventId = field(body, 'event_id');
    const event = eventId && eventId.length <= MAX_ID ? await this.feed.event(member.accountId, eventId) : null;
    if (!event) throw new NotFound('event not found');
    const position = await this.writes.redeliver(endpoint._id, [event._id], this.caller(request, member));
    await this.progress.waitFor([EVENT_FEED], position);
    return reply.redirect(`/partner/webhooks/${endpoint._id}?sent=1`, 303);
  }

  @Get('events')
  async events(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Query('before') before?: string,
  ) {
    let beforeOrder: string | null = null;
    if (typeof before === 'string' && before !== '') {
      const from = before.length <= MAX_ID ? await this.feed.event(member.accountId, before) : null;
      if (!from) throw new NotFound('event not found');
      beforeOrder = from.order;
    }
    const found = await this.feed.latest(member.accountId, beforeOrder, EVENTS_PER_PAGE + 1);
    const events = found.slice(0, EVENTS_PER_PAGE).map((e) => ({
      id: e._id,
      type: e.type,
      resource: e.resourceType.replace(/_/g, ' '),
      resourceId: e.resourceId,
      sequence: e.sequence,
      createdAt: humanUtc(e.createdAt),
    }));
    return this.pages.send(request, reply, 'events', {
      title: 'Events',
      events,
      paged: beforeOrder !== null,
      older: found.length > EVENTS_PER_PAGE ? `/partner/events?before=${encodeURIComponent(events[events.length - 1].id)}` : null,
    });
  }

  private async listPage(
    request: SiteRequest,
    reply: FastifyReply,
    member: SignedInMember,
    model: { notice?: string; errors?: string[]; form: Record<string, unknown> },
    status = 200,
  ) {
    const endpoints = (await this.endpoints.ofPartner(member.accountId)).map(endpointRow);
    return this.pages.send(
      request,
      reply,
      'webhooks',
      {
        title: 'Webhooks',
        ...model,
        endpoints,
        full: endpoints.length >= MAX_ENDPOINTS,
        maxEndpoints: MAX_ENDPOINTS,
        maxUrl: MAX_WEBHOOK_URL_LENGTH,
        maxDescription: DESCRIPTION_MAX,
      },
      status,
    );
  }

  private async setEnabled(request: SiteRequest, reply: FastifyReply, member: SignedInMember, endpointId: string, enabled: boolean) {
    await this.found(member, endpointId);
    const position = await this.writes.update(endpointId, { enabled }, this.caller(request, member));
    await this.progress.waitFor([WEBHOOK_ENDPOINTS], position);
    return reply.redirect(`/partner/webhooks?done=${enabled ? 'enabled' : 'disabled'}`, 303);
  }

  /** The member, as the actor of the feed's events, for their partner. */
  private caller(request: SiteRequest, member: SignedInMember): PartnerCaller {
    return accountCaller(request, member);
  }

  /** The partner's endpoint; another partner's, a removed one or none is not found (404). */
  private async found(member: SignedInMember, endpointId: string): Promise<WebhookEndpointView> {
    const endpoint = endpointId.length <= MAX_ID ? await this.endpoints.endpoint(member.accountId, endpointId) : null;
    if (!endpoint) throw new NotFound('webhook endpoint not found');
    return endpoint;
  }

  private async read(member: SignedInMember, endpointId: string, position: Parameters<ViewProgress['waitFor']>[1]) {
    await this.progress.waitFor([WEBHOOK_ENDPOINTS], position);
    return this.found(member, endpointId);
  }
}
