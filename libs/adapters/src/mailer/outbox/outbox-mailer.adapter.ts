import { Mailer, MailNotSent, OutgoingEmail } from '@deals/kernel';
import { mkdirSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import { MailSettings, messageOf } from '../mail-settings';

/**
 * The embedded Mailer: each email a complete RFC 5322 message (as SMTP would carry it) in
 * `<dir>/<time>-<message id>.eml`, written to a temporary name, synced, then renamed, so the folder
 * never holds half a message. For running without a mail server; a person or a tool reads them.
 */
export class OutboxMailer extends Mailer {
  readonly backend = 'outbox';

  constructor(
    private readonly dir: string,
    private readonly settings: MailSettings,
  ) {
    super();
    mkdirSync(dir, { recursive: true });
  }

  async send(email: OutgoingEmail): Promise<void> {
    const message = await new MailComposer(messageOf(this.settings, email)).compile().build();
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${email.messageId.replace(/[^A-Za-z0-9@._-]/g, '')}.eml`;
    const temporary = join(this.dir, `.${name}.tmp`);
    try {
      const file = await open(temporary, 'w');
      try {
        await file.writeFile(message);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, join(this.dir, name));
    } catch (error) {
      throw new MailNotSent(`the outbox could not take the message: ${(error as Error).message}`, false);
    }
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}
