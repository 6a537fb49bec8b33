import { defineProjection, testClockOf, ViewDocument } from '@deals/kernel';
import type { SandboxMailKept } from '../../domain/sandbox-mail/sandbox-mail.decider';

/**
 * "What has sandbox S kept of its mail, newest first?" No personal value is kept here: the address
 * and the bodies are read from the log (under the user's key) when one email is asked for.
 */
export interface SandboxMail extends ViewDocument {
  sandboxId: string;
  /** The test clock of the world that sent it; null: the sandbox's own. */
  testClockId: string | null;
  userId: string;
  messageId: string;
  subject: string;
  keptAt: string;
}

export const SANDBOX_MAIL = 'sandbox_mail';

export const sandboxMailProjection = defineProjection<SandboxMail>({
  name: SANDBOX_MAIL,
  handles: ['SandboxMailKept'],
  indexes: [{ keys: { sandboxId: 1, keptAt: -1 } }],
  // Read by the partner later, never as a write's answer.
  answersWait: false,
  documentIds: (event) => [(event.data as SandboxMailKept['data']).mailId],
  evolve(view, recorded, id) {
    if (view) return view;
    const { sandboxId, partnerId, userId, messageId, subject, keptAt } = (recorded as unknown as SandboxMailKept).data;
    return { _id: id, _pos: recorded.position, sandboxId, testClockId: testClockOf(partnerId), userId, messageId, subject, keptAt };
  },
});
