import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The one-click unsubscribe link of a subscription's daily email (RFC 8058): its key is an HMAC of
 * the subscription id under an installation secret, so only the email's reader can use it.
 */
export abstract class UnsubscribeLinks {
  abstract urlOf(subscriptionId: string): string;
  abstract opens(subscriptionId: string, key: string | undefined): boolean;
}

export class KeyedUnsubscribeLinks extends UnsubscribeLinks {
  constructor(
    private readonly apiBaseUrl: string,
    private readonly secret: Buffer,
  ) {
    super();
  }

  private keyOf(subscriptionId: string): string {
    return createHmac('sha256', this.secret).update(`unsubscribe\n${subscriptionId}`).digest('base64url').slice(0, 22);
  }

  urlOf(subscriptionId: string): string {
    return `${this.apiBaseUrl}/subscriptions/${subscriptionId}/unsubscribe?key=${this.keyOf(subscriptionId)}`;
  }

  opens(subscriptionId: string, key: string | undefined): boolean {
    if (key === undefined) return false;
    const expected = Buffer.from(this.keyOf(subscriptionId));
    const given = Buffer.from(key);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
