/** How webhooks are sent, from the service's configuration. */
export abstract class WebhookSettings {
  /** Endpoints may name private, loopback and link-local addresses (`WEBHOOK_ALLOW_PRIVATE_ADDRESSES`). */
  abstract readonly allowPrivateAddresses: boolean;
  /** The waits between a delivery's attempts, in ms (`WEBHOOK_RETRY_DELAYS_MS`). */
  abstract readonly retryDelaysMs: readonly number[];
  /** `WEBHOOK_TIMEOUT_MS`: a receiver's time to answer. */
  abstract readonly timeoutMs: number;
}
