import { ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import {
  SANDBOX_MAIL_KEPT_A_DAY,
  SANDBOX_MAIL_SENT_A_DAY,
  sandboxMailDayDecider,
  SandboxMailPlaceTaken,
  TakeSandboxMailPlace,
} from './sandbox-mail.decider';

const given = deciderSpec(sandboxMailDayDecider);
const NOW = new Date('2026-06-15T12:00:00Z');
const take = (mailId: string, owned: boolean): TakeSandboxMailPlace => ({
  type: 'TakeSandboxMailPlace',
  data: { sandboxId: 'p_test', day: '2026-06-15', mailId, owned },
});
const taken = (mailId: string, disposition: 'sent' | 'kept'): SandboxMailPlaceTaken => ({
  type: 'SandboxMailPlaceTaken',
  data: { sandboxId: 'p_test', day: '2026-06-15', mailId, disposition, at: NOW.toISOString() },
});
const many = (n: number, disposition: 'sent' | 'kept') => Array.from({ length: n }, (_, i) => taken(`${disposition}-${i}`, disposition));

describe("a sandbox's mail of a day", () => {
  it('sends an owned address for real, keeps any other', () => {
    given([])
      .when(take('m1', true), NOW)
      .then([taken('m1', 'sent')]);
    given([])
      .when(take('m1', false), NOW)
      .then([taken('m1', 'kept')]);
  });

  it(`sends at most ${SANDBOX_MAIL_SENT_A_DAY} a day: an owned address's mail past them is kept`, () => {
    given(many(SANDBOX_MAIL_SENT_A_DAY - 1, 'sent'))
      .when(take('last', true), NOW)
      .then([taken('last', 'sent')]);
    given(many(SANDBOX_MAIL_SENT_A_DAY, 'sent'))
      .when(take('over', true), NOW)
      .then([taken('over', 'kept')]);
  });

  it(`keeps at most ${SANDBOX_MAIL_KEPT_A_DAY} a day: past them, a mail is refused`, () => {
    given(many(SANDBOX_MAIL_KEPT_A_DAY - 1, 'kept'))
      .when(take('last', false), NOW)
      .then([taken('last', 'kept')]);
    given(many(SANDBOX_MAIL_KEPT_A_DAY, 'kept'))
      .when(take('over', false), NOW)
      .thenThrows(ValidationFailed, { message: expect.stringContaining('none more is kept until tomorrow') });
  });

  it('takes one place a mail: asked again (a retry), nothing more', () => {
    given([taken('m1', 'kept')])
      .when(take('m1', true), NOW)
      .then([]);
  });
});
