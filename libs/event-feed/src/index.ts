export { FEED_EVENT_TYPES, isFeedEventType } from './domain/feed-event';
export type { FeedEventType, FeedResourceType } from './domain/feed-event';
export { InvalidWebhookSecret, newWebhookSecret, signWebhook, WEBHOOK_USER_AGENT, webhookHeaders } from './delivery/webhook-signature';
export type { WebhookHeaders } from './delivery/webhook-signature';
export { DEFAULT_WEBHOOK_TIMEOUT_MS, RESPONSE_EXCERPT_BYTES, WebhookSender } from './delivery/webhook-sender';
export type { WebhookAttempt, WebhookRequest, WebhookSenderOptions } from './delivery/webhook-sender';
export { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH } from './delivery/webhook-url';
export type { ResolveHost } from './delivery/address-guard';
