import { PurchasingModule } from '@deals/purchasing';
import { Module } from '@nestjs/common';
import { WebhookEndpointWrites } from './commands/webhook-endpoint-writes';
import { WebhookSettings } from './commands/webhook-settings';
import { WebhookSender } from './delivery/webhook-sender';
import { EventsController } from './http/events.controller';
import { FeedRenderer } from './http/feed-renderer';
import { WebhookEndpointsController } from './http/webhook-endpoints.controller';
import { EventFeedQueries } from './queries/event-feed.queries';
import { WebhookEndpointQueries } from './queries/webhook-endpoint.queries';
import { DeliverWebhooks } from './reactions/deliver-webhooks.reaction';

/** The partner event feed and its webhooks: queries, endpoints' writes, the rendering and the delivery jobs. */
@Module({
  imports: [PurchasingModule],
  providers: [
    EventFeedQueries,
    WebhookEndpointQueries,
    WebhookEndpointWrites,
    FeedRenderer,
    DeliverWebhooks,
    {
      provide: WebhookSender,
      useFactory: (settings: WebhookSettings) =>
        new WebhookSender({ allowPrivateAddresses: settings.allowPrivateAddresses, timeoutMs: settings.timeoutMs }),
      inject: [WebhookSettings],
    },
  ],
  exports: [EventFeedQueries, WebhookEndpointQueries, WebhookEndpointWrites, FeedRenderer, DeliverWebhooks, WebhookSender],
})
export class EventFeedModule {}

/** The feed's HTTP routes: /v1/events and /v1/webhook_endpoints. */
@Module({
  imports: [EventFeedModule],
  controllers: [EventsController, WebhookEndpointsController],
})
export class EventFeedHttpModule {}
