/** One email to one recipient: both bodies, and the headers the service sets itself. */
export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** `<...@...>`: the same for a resend of the same message (a batch and its recipient), so a resend is recognisable. */
  messageId: string;
  /** Extra headers, e.g. `List-Unsubscribe`. */
  headers?: Record<string, string>;
}

/**
 * The server refused the message. `permanent`: a 5xx answer (no such mailbox, refused), not worth
 * another try; otherwise (4xx, a connection refused or lost) it may go through later.
 */
export class MailNotSent extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly responseCode: number | null = null,
  ) {
    super(message);
  }
}

/**
 * Sends email. Promises: `send` resolves once the message is accepted for delivery (by the SMTP
 * server, or written whole into the outbox) and throws {@link MailNotSent} otherwise. From and
 * Reply-To come from the adapter's configuration.
 *
 * Leaves out: retries (the caller decides), bounces after acceptance, templates.
 */
export abstract class Mailer {
  abstract readonly backend: string;
  abstract send(email: OutgoingEmail): Promise<void>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}
