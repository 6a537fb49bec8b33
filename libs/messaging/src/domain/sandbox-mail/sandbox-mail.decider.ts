import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';

/**
 * A sandbox's mail: what the service would email to the users of a sandbox (or of a test clock's
 * world in it) is sent for real only to an address the partner's own people proved they own, and
 * at most {@link SANDBOX_MAIL_SENT_A_DAY} a day; any other is kept in the sandbox's outbox for the
 * partner to read, at most {@link SANDBOX_MAIL_KEPT_A_DAY} a day. Days are real UTC days, whatever
 * a test clock says: the bounds are on what a sandbox costs the world, in its time.
 */
export const SANDBOX_MAIL_SENT_A_DAY = 100;
export const SANDBOX_MAIL_KEPT_A_DAY = 1000;

/** A place of the day taken by one email: sent for real, or kept in the outbox. */
export type SandboxMailPlaceTaken = DomainEvent<
  'SandboxMailPlaceTaken',
  { sandboxId: string; day: string; mailId: string; disposition: 'sent' | 'kept'; at: string }
>;

/**
 * An email kept in a sandbox's outbox instead of sent: to whom and what (personal data, encrypted
 * under the user's key in the log), for which world (`partnerId`: the sandbox or a clock's world).
 */
export type SandboxMailKept = DomainEvent<
  'SandboxMailKept',
  {
    mailId: string;
    sandboxId: string;
    partnerId: string;
    userId: string;
    messageId: string;
    subject: string;
    to: string | null;
    text: string | null;
    html: string | null;
    keptAt: string;
  }
>;

export type SandboxMailEvent = SandboxMailPlaceTaken | SandboxMailKept;

/** Takes a place of the day for `mailId`: sent when the address is owned and the day has room, else kept. */
export type TakeSandboxMailPlace = DomainCommand<
  'TakeSandboxMailPlace',
  { sandboxId: string; day: string; mailId: string; owned: boolean }
>;

export interface SandboxMailDay {
  sent: number;
  kept: number;
  /** Each mail's place, so that a mail asked again (a retry) takes none more. */
  places: ImmutableMap<string, 'sent' | 'kept'>;
}

/** A sandbox's mail of one real UTC day. */
export const sandboxMailDayStream = (sandboxId: string, day: string) => `sandboxmail-${sandboxId}-${day}`;
/** One kept email. */
export const sandboxMailStream = (mailId: string) => `sandboxmail-${mailId}`;

export const sandboxMailDayDecider: Decider<SandboxMailDay, TakeSandboxMailPlace, SandboxMailPlaceTaken> = {
  initialState: () => ({ sent: 0, kept: 0, places: ImmutableMap() }),
  decide(command, day, now) {
    switch (command.type) {
      case 'TakeSandboxMailPlace': {
        const { sandboxId, mailId, owned } = command.data;
        if (day.places.has(mailId)) return [];
        const disposition = owned && day.sent < SANDBOX_MAIL_SENT_A_DAY ? 'sent' : 'kept';
        if (disposition === 'kept' && day.kept >= SANDBOX_MAIL_KEPT_A_DAY)
          throw new ValidationFailed([
            {
              type: 'invalid',
              resource: 'sandbox_mail',
              message: `the sandbox's outbox holds ${SANDBOX_MAIL_KEPT_A_DAY} emails of today already: none more is kept until tomorrow (UTC)`,
            },
          ]);
        return [{ type: 'SandboxMailPlaceTaken', data: { sandboxId, day: command.data.day, mailId, disposition, at: now.toISOString() } }];
      }
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(day, event) {
    switch (event.type) {
      case 'SandboxMailPlaceTaken': {
        const places = day.places.set(event.data.mailId, event.data.disposition);
        return event.data.disposition === 'sent' ? { ...day, sent: day.sent + 1, places } : { ...day, kept: day.kept + 1, places };
      }
      default:
        return ignoredEvent(event.type, day);
    }
  },
};

/** Keeps one email in the outbox, once: asked again (a retry of the same message), nothing more. */
export type KeepSandboxMail = DomainCommand<'KeepSandboxMail', SandboxMailKept['data']>;

export const keptMailDecider: Decider<{ kept: boolean }, KeepSandboxMail, SandboxMailKept> = {
  initialState: () => ({ kept: false }),
  decide(command, mail) {
    switch (command.type) {
      case 'KeepSandboxMail':
        return mail.kept ? [] : [{ type: 'SandboxMailKept', data: command.data }];
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(mail, event) {
    switch (event.type) {
      case 'SandboxMailKept':
        return { kept: true };
      default:
        return ignoredEvent(event.type, mail);
    }
  },
};
