import { createHmac } from 'node:crypto';

/**
 * Endpoints' signing secrets, derived from an installation secret and the salt each endpoint's
 * events record: the log and the views hold salts, and only a process holding the installation's
 * secret can sign or show a secret. Every replica derives the same secret.
 */
export class WebhookSecrets {
  constructor(private readonly master: Buffer) {}

  /** The secret of one salt, in Standard Webhooks' form (`whsec_` and 32 bytes in base64). */
  secretOf(endpointId: string, salt: string): string {
    return `whsec_${createHmac('sha256', this.master).update(`webhook-secret\n${endpointId}\n${salt}`).digest('base64')}`;
  }

  /** The secrets that sign at `now`: the newest, and a rotated one until its time is over. */
  signing(endpointId: string, salts: ReadonlyArray<{ salt: string; until: string | null }>, now: Date): string[] {
    return salts.filter((s) => s.until === null || Date.parse(s.until) > now.getTime()).map((s) => this.secretOf(endpointId, s.salt));
  }
}
