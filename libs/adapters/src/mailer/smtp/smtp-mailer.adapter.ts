import { Mailer, MailNotSent, OutgoingEmail } from '@deals/kernel';
import nodemailer, { Transporter } from 'nodemailer';
import { MailSettings, messageOf } from '../mail-settings';

/** Connections the pool keeps open, and messages sent over one before it is renewed. */
const MAX_CONNECTIONS = 5;
const MAX_MESSAGES = 1000;

/**
 * The Mailer over SMTP (`SMTP_URL`: `smtp://host:port`, or `smtps://user:pass@host:port`) through
 * nodemailer's pooled transport: a few connections kept open, many messages over each (a batch of
 * 10,000 does not open 10,000 connections). A 5xx answer is a permanent refusal; a 4xx answer or a
 * connection that fails is temporary.
 */
export class SmtpMailer extends Mailer {
  readonly backend = 'smtp';
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly settings: MailSettings,
  ) {
    super();
    // The URL inside the options object: as a first argument of its own, the options would be taken as message defaults.
    this.transport = nodemailer.createTransport({
      url,
      pool: true,
      maxConnections: MAX_CONNECTIONS,
      maxMessages: MAX_MESSAGES,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  async send(email: OutgoingEmail): Promise<void> {
    try {
      await this.transport.sendMail(messageOf(this.settings, email));
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode ?? null;
      throw new MailNotSent(`SMTP: ${withoutAddresses((error as Error).message)}`, code !== null && code >= 500 && code < 600, code);
    }
  }

  async ping(): Promise<void> {
    await this.transport.verify();
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/**
 * A server's refusal without the addresses it quotes (`550 <ana@example.com>: no such mailbox`): the
 * reason is kept in the batch's events, which must hold no recipient's address.
 */
export function withoutAddresses(text: string): string {
  return text.replace(/[^\s<>()[\]"',;:]+@[^\s<>()[\]"',;:]+/g, '<address>');
}
