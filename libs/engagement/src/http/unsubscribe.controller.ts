import { NotFound, ViewProgress } from '@deals/kernel';
import { ApiErrors, ApiRequest, requestDto, TakesFormBodies, CalledBy } from '@deals/wire';
import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { SetSubscriptionStatus } from '../commands/subscription.commands';
import { SUBSCRIPTIONS } from '../projections/subscriptions/subscriptions.projection';
import { EngagementQueries } from '../queries/engagement.queries';
import { UnsubscribeLinks } from './unsubscribe-links';

const unsubscribeQuery = z
  .object({
    key: z
      .unknown()
      .optional()
      .transform((value) => (typeof value === 'string' ? value : undefined))
      .meta({ type: 'string', description: 'the key the daily email’s link carries' }),
  })
  .meta({ 'x-resource': 'subscription' });
class UnsubscribeQuery extends requestDto(unsubscribeQuery) {}
const subscriptionIdParams = z
  .object({
    subscription_id: z.string().max(128, 'must be at most 128 characters').meta({ description: 'the subscription the link names' }),
  })
  .meta({ 'x-resource': 'subscription' });
class SubscriptionIdParams extends requestDto(subscriptionIdParams) {}

const PAGE =
  '<!doctype html><html><body style="font-family:sans-serif"><p>You will get no more daily emails for this region.</p></body></html>';

/**
 * The daily email's one-click unsubscribe (RFC 8058: POST from the mail client, with its form body;
 * GET from a reader who follows the link): public, opened only with the link's key; anything else is not found.
 */
@ApiTags('engagement')
@Controller('subscriptions/:subscription_id/unsubscribe')
export class UnsubscribeController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: EngagementQueries,
    private readonly links: UnsubscribeLinks,
    private readonly progress: ViewProgress,
  ) {}

  @Post()
  @CalledBy('anyone')
  @HttpCode(200)
  @TakesFormBodies()
  @ApiOperation({
    summary: 'Unsubscribe from the daily email (one click)',
    description:
      'Public, with the `key` of the daily email’s link; without it, 404. The body a mail client sends (`List-Unsubscribe=One-Click`, ' +
      'URL-encoded or multipart) is taken and not read; no body does the same.',
  })
  @ApiConsumes('application/x-www-form-urlencoded', 'multipart/form-data')
  @ApiBody({
    required: false,
    description: 'what RFC 8058 has a mail client send',
    schema: { type: 'object', properties: { 'List-Unsubscribe': { type: 'string', enum: ['One-Click'] } } },
  })
  @ApiResponse({ status: 200, description: 'unsubscribed', content: { 'text/html': { schema: { type: 'string' }, example: PAGE } } })
  @ApiErrors(404)
  @ApiRequest({ params: SubscriptionIdParams, query: UnsubscribeQuery })
  oneClick(@Param() params: SubscriptionIdParams, @Query() query: UnsubscribeQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.unsubscribe(params.subscription_id, query.key, reply);
  }

  @Get()
  @CalledBy('anyone')
  @ApiOperation({
    summary: 'Unsubscribe from the daily email (the link)',
    description: 'Public, with the `key` of the daily email’s link; without it, 404.',
  })
  @ApiResponse({ status: 200, description: 'unsubscribed', content: { 'text/html': { schema: { type: 'string' }, example: PAGE } } })
  @ApiErrors(404)
  @ApiRequest({ params: SubscriptionIdParams, query: UnsubscribeQuery })
  followed(@Param() params: SubscriptionIdParams, @Query() query: UnsubscribeQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.unsubscribe(params.subscription_id, query.key, reply);
  }

  private async unsubscribe(subscriptionId: string, key: string | undefined, reply: FastifyReply): Promise<string> {
    void reply.header('cache-control', 'no-store');
    const found = this.links.opens(subscriptionId, key) ? await this.queries.anySubscription(subscriptionId) : null;
    if (!found) throw new NotFound('subscription not found');
    const { position } = await this.commands.execute(
      new SetSubscriptionStatus(subscriptionId, 'inactive', found.userId, {
        partnerId: found.partnerId,
        actor: `unsubscribe-link:${found.userId}`,
      }),
    );
    await this.progress.waitFor([SUBSCRIPTIONS], position);
    void reply.type('text/html; charset=utf-8');
    return PAGE;
  }
}
