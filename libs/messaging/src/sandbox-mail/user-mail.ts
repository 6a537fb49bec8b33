import {
  accountOf,
  Clock,
  EventStore,
  foldedIdentity,
  handleCommand,
  isSandbox,
  livePartnerOf,
  Mailer,
  MailNotSent,
  OPERATOR,
  OutgoingEmail,
  realClockOf,
  ValidationFailed,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import {
  keptMailDecider,
  sandboxMailDayDecider,
  sandboxMailDayStream,
  SandboxMailKept,
  sandboxMailStream,
} from '../domain/sandbox-mail/sandbox-mail.decider';

/**
 * The addresses of a partner's own people: the partner site's members, whom the service's operator
 * invited by address and who signed up. A port, so that messaging does not depend on the site.
 */
export abstract class OwnAddresses {
  /** Folded (`foldedIdentity`: NFC, case-folded), as an address sent to is before it is looked up. */
  abstract of(livePartnerId: string): Promise<ReadonlySet<string>>;
}

/** A kept email's id: the same for the same message to the same world, so that a retry keeps it once. */
export const sandboxMailId = (partnerId: string, messageId: string) =>
  `sm_${createHash('sha256').update(`${partnerId}\n${messageId}`).digest('base64url').slice(0, 22)}`;

/**
 * The service's email to one of a partner's users. A live partner's is sent. A sandbox's (or a test
 * clock world's) reaches no stranger: it is sent only to an address the partner's people own, within
 * the sandbox's daily bound, and otherwise kept in the sandbox's outbox (`GET /v1/sandbox_mail`).
 * Throws `MailNotSent` as the mailer does, and when the sandbox's outbox is full for the day.
 */
@Injectable()
export class UserMail {
  private readonly realClock: Clock;

  constructor(
    private readonly mailer: Mailer,
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly addresses: OwnAddresses,
  ) {
    this.realClock = realClockOf(clock);
  }

  async send(partnerId: string, userId: string, email: OutgoingEmail): Promise<'sent' | 'kept'> {
    if (!isSandbox(partnerId)) {
      await this.mailer.send(email);
      return 'sent';
    }
    const sandboxId = accountOf(partnerId);
    const mailId = sandboxMailId(partnerId, email.messageId);
    const owned = (await this.addresses.of(livePartnerOf(partnerId))).has(foldedIdentity(email.to.trim()));
    const day = this.realClock.now().toISOString().slice(0, 10);
    let taken;
    try {
      taken = await handleCommand(
        this.store,
        sandboxMailDayStream(sandboxId, day),
        sandboxMailDayDecider,
        { type: 'TakeSandboxMailPlace', data: { sandboxId, day, mailId, owned } },
        { now: this.realClock.now(), metadata: { ...OPERATOR, partnerId } },
      );
    } catch (error) {
      // The day's outbox full is final for the day; a store that did not answer may answer a retry.
      throw new MailNotSent(error instanceof Error ? error.message : String(error), error instanceof ValidationFailed);
    }
    if (taken.state.places.get(mailId) === 'sent') {
      await this.mailer.send(email);
      return 'sent';
    }
    const kept: SandboxMailKept = {
      type: 'SandboxMailKept',
      data: {
        mailId,
        sandboxId,
        partnerId,
        userId,
        messageId: email.messageId,
        subject: email.subject,
        to: email.to,
        text: email.text,
        html: email.html,
        keptAt: this.realClock.now().toISOString(),
      },
    };
    // Kept once: a retry of the same message finds its stream there.
    await handleCommand(
      this.store,
      sandboxMailStream(mailId),
      keptMailDecider,
      { type: 'KeepSandboxMail', data: kept.data },
      { now: this.realClock.now(), metadata: { ...OPERATOR, partnerId } },
    );
    return 'kept';
  }
}
