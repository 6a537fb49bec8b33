import type { OutgoingEmail } from '@deals/kernel';

/** Who the service's emails come from. */
export interface MailSettings {
  /** `From`, e.g. `"Deals" <deals@example.com>`. */
  from: string;
  /** `Reply-To`, when replies go elsewhere. */
  replyTo: string | null;
}

/** The message as nodemailer takes it (to send, or to compose into an .eml), the same for every adapter. */
export const messageOf = (settings: MailSettings, email: OutgoingEmail) => ({
  from: settings.from,
  replyTo: settings.replyTo ?? undefined,
  to: email.to,
  subject: email.subject,
  text: email.text,
  html: email.html,
  messageId: email.messageId,
  headers: email.headers,
});
