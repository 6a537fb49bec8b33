import { NotFound, Unauthorized, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { EnrolMemberTotp, invitationIsLive, memberDecider, PresentInvitation, SignInMember } from './member.decider';
import { passwordIssues } from './member-rules';
import {
  InvitationRefusal,
  MemberInvitationRefused,
  MemberEvent,
  MemberInvited,
  MemberReauthenticationFailed,
  MemberSignedIn,
  MemberSignedUp,
  MemberSignInFailed,
  MemberTotpEnrolled,
  ReauthenticationFailure,
  SignInFailure,
} from './member.events';

const given = deciderSpec(memberDecider);
const t0 = new Date('2026-06-15T12:00:00Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

const invited: MemberInvited = {
  type: 'MemberInvited',
  data: { memberId: 'm1', partnerId: 'p1', email: 'ada@example.com', inviteHash: 'h-invite', invitedAt: iso(0), expiresAt: iso(72 * 60) },
};
const signedUp: MemberSignedUp = {
  type: 'MemberSignedUp',
  data: { memberId: 'm1', partnerId: 'p1', passwordHash: 'scrypt$x', signedUpAt: iso(1) },
};
const signedIn = (sessionHash: string, minutes: number, totpStep: number | null = null): MemberSignedIn => ({
  type: 'MemberSignedIn',
  data: {
    memberId: 'm1',
    partnerId: 'p1',
    sessionHash,
    signedInAt: iso(minutes),
    expiresAt: iso(minutes + 12 * 60),
    address: '10.0.0.1',
    totpStep,
  },
});
const enrolled: MemberTotpEnrolled = {
  type: 'MemberTotpEnrolled',
  data: { memberId: 'm1', partnerId: 'p1', sealedSecret: 'sealed', totpStep: 100, enrolledAt: iso(3) },
};
const signIn = (change: Partial<SignInMember['data']> = {}): SignInMember => ({
  type: 'SignInMember',
  data: {
    memberId: 'm1',
    sessionHash: 's1',
    expiresAt: iso(5 + 12 * 60),
    address: '10.0.0.1',
    passwordMatches: true,
    totpStep: null,
    ...change,
  },
});
const failed = (reason: SignInFailure, minutes = 5): MemberSignInFailed => ({
  type: 'MemberSignInFailed',
  data: { memberId: 'm1', partnerId: 'p1', reason, address: '10.0.0.1', failedAt: iso(minutes) },
});

const enrol = (change: Partial<EnrolMemberTotp['data']> = {}): EnrolMemberTotp => ({
  type: 'EnrolMemberTotp',
  data: { memberId: 'm1', sealedSecret: 'sealed', totpStep: 100, passwordMatches: true, address: '10.0.0.2', ...change },
});
const reauthenticationFailed = (reason: ReauthenticationFailure, minutes = 3): MemberReauthenticationFailed => ({
  type: 'MemberReauthenticationFailed',
  data: { memberId: 'm1', partnerId: 'p1', purpose: 'totp-enrolment', reason, address: '10.0.0.2', failedAt: iso(minutes) },
});
const presented = (inviteHash: string): PresentInvitation => ({
  type: 'PresentInvitation',
  data: { memberId: 'm1', inviteHash, address: '10.0.0.3' },
});
const linkRefused = (reason: InvitationRefusal, minutes: number): MemberInvitationRefused => ({
  type: 'MemberInvitationRefused',
  data: { memberId: 'm1', partnerId: 'p1', reason, address: '10.0.0.3', refusedAt: iso(minutes) },
});

describe('partner member decider', () => {
  describe('not invited', () => {
    it('invites', () => {
      const { invitedAt: _, ...data } = invited.data;
      given([]).when({ type: 'InviteMember', data }, t0).then([invited]);
    });
    it('knows no sign-up', () => {
      given([])
        .when({ type: 'SignUpMember', data: { memberId: 'm1', inviteHash: 'h', passwordHash: 'x' } }, t0)
        .thenThrows(NotFound);
    });
  });

  describe('invited', () => {
    it('signs up with the invitation it holds', () => {
      given([invited])
        .when({ type: 'SignUpMember', data: { memberId: 'm1', inviteHash: 'h-invite', passwordHash: 'scrypt$x' } }, at(1))
        .then([signedUp]);
    });
    it('refuses an invitation replaced by a newer one', () => {
      given([invited])
        .when({ type: 'SignUpMember', data: { memberId: 'm1', inviteHash: 'h-other', passwordHash: 'x' } }, at(1))
        .thenThrows(ValidationFailed);
    });
    it('refuses an invitation past its 72 hours', () => {
      given([invited])
        .when({ type: 'SignUpMember', data: { memberId: 'm1', inviteHash: 'h-invite', passwordHash: 'x' } }, at(72 * 60))
        .thenThrows(ValidationFailed, { message: expect.stringContaining('expired') });
    });
    it('refuses an invitation of another partner for the same email', () => {
      const { invitedAt: _, ...data } = invited.data;
      given([invited])
        .when({ type: 'InviteMember', data: { ...data, partnerId: 'p2' } }, at(1))
        .thenThrows(ValidationFailed);
    });
    it('records a sign-in before the sign-up as failed', () => {
      given([invited])
        .when(signIn(), at(5))
        .then([failed('not-signed-up')]);
    });
  });

  describe('signed up', () => {
    it('refuses the same invitation a second time', () => {
      given([invited, signedUp])
        .when({ type: 'SignUpMember', data: { memberId: 'm1', inviteHash: 'h-invite', passwordHash: 'y' } }, at(2))
        .thenThrows(ValidationFailed, { message: expect.stringContaining('used') });
    });
    it('refuses another invitation', () => {
      const { invitedAt: _, ...data } = invited.data;
      given([invited, signedUp]).when({ type: 'InviteMember', data }, at(2)).thenThrows(ValidationFailed);
    });
    it('signs in with the right password', () => {
      given([invited, signedUp])
        .when(signIn(), at(5))
        .then([signedIn('s1', 5)]);
    });
    it('records a wrong password', () => {
      given([invited, signedUp])
        .when(signIn({ passwordMatches: false }), at(5))
        .then([failed('password')]);
    });
    it('refreshes a live session, and refuses one idle for 30 minutes', () => {
      given([invited, signedUp, signedIn('s1', 5)])
        .when({ type: 'RefreshMemberSession', data: { memberId: 'm1', sessionHash: 's1' } }, at(20))
        .then([{ type: 'MemberSessionRefreshed', data: { memberId: 'm1', sessionHash: 's1', seenAt: iso(20) } }]);
      given([invited, signedUp, signedIn('s1', 5)])
        .when({ type: 'RefreshMemberSession', data: { memberId: 'm1', sessionHash: 's1' } }, at(35))
        .thenThrows(Unauthorized);
    });
    it('refuses a session past its 12 hours, however busy', () => {
      const refreshed = (minutes: number) => ({
        type: 'MemberSessionRefreshed' as const,
        data: { memberId: 'm1', sessionHash: 's1', seenAt: iso(minutes) },
      });
      given([invited, signedUp, signedIn('s1', 5), refreshed(700), refreshed(720)])
        .when({ type: 'RefreshMemberSession', data: { memberId: 'm1', sessionHash: 's1' } }, at(5 + 12 * 60))
        .thenThrows(Unauthorized);
    });
    it('signs out everywhere: every live session, listed', () => {
      given([invited, signedUp, signedIn('s1', 5), signedIn('s2', 6)])
        .when({ type: 'SignOutEverywhere', data: { memberId: 'm1' } }, at(10))
        .then([
          {
            type: 'MemberSignedOutEverywhere',
            data: { memberId: 'm1', partnerId: 'p1', sessionHashes: ['s1', 's2'], signedOutAt: iso(10) },
          },
        ]);
    });
    it('ends one session on sign-out, and no session twice', () => {
      given([invited, signedUp, signedIn('s1', 5)])
        .when({ type: 'SignOutMember', data: { memberId: 'm1', sessionHash: 's1' } }, at(10))
        .then([{ type: 'MemberSignedOut', data: { memberId: 'm1', sessionHash: 's1', signedOutAt: iso(10) } }]);
      given([
        invited,
        signedUp,
        signedIn('s1', 5),
        { type: 'MemberSignedOut', data: { memberId: 'm1', sessionHash: 's1', signedOutAt: iso(10) } },
      ])
        .when({ type: 'SignOutMember', data: { memberId: 'm1', sessionHash: 's1' } }, at(11))
        .then([]);
    });
    it('enrols a second factor once', () => {
      given([invited, signedUp]).when(enrol(), at(3)).then([enrolled]);
      given([invited, signedUp, enrolled])
        .when(enrol({ sealedSecret: 'other', totpStep: 101 }), at(4))
        .thenThrows(ValidationFailed);
    });
    it('records a wrong password asked again before enrolling, whatever the code', () => {
      given([invited, signedUp])
        .when(enrol({ passwordMatches: false }), at(3))
        .then([reauthenticationFailed('password')]);
      given([invited, signedUp])
        .when(enrol({ passwordMatches: false, totpStep: null }), at(3))
        .then([reauthenticationFailed('password')]);
    });
    it('records the right password with a wrong code of the new secret as a failed re-authentication', () => {
      given([invited, signedUp])
        .when(enrol({ totpStep: null }), at(3))
        .then([reauthenticationFailed('code')]);
    });
    it('refuses an enrolment once enrolled before it looks at the password', () => {
      given([invited, signedUp, enrolled])
        .when(enrol({ passwordMatches: false }), at(4))
        .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'totp' })] });
    });
  });

  describe('a sign-up link presented', () => {
    it('changes nothing while it works', () => {
      given([invited]).when(presented('h-invite'), at(1)).then([]);
    });
    it("records a link whose secret is not the member's live invitation: made up, replaced, or used", () => {
      given([invited])
        .when(presented('h-made-up'), at(1))
        .then([linkRefused('secret', 1)]);
      const again: MemberInvited = { ...invited, data: { ...invited.data, inviteHash: 'h-newer', invitedAt: iso(2) } };
      given([invited, again])
        .when(presented('h-invite'), at(3))
        .then([linkRefused('secret', 3)]);
      given([invited, signedUp])
        .when(presented('h-invite'), at(3))
        .then([linkRefused('secret', 3)]);
    });
    it('records the live link past its 72 hours as expired', () => {
      given([invited])
        .when(presented('h-invite'), at(72 * 60))
        .then([linkRefused('expired', 72 * 60)]);
    });
    it('records nothing for a member who does not exist (no stream is made)', () => {
      given([]).when(presented('h-invite'), t0).thenThrows(NotFound);
    });
    it('tells a live invitation: invited, not signed up, not expired, not removed', () => {
      const state = (events: MemberEvent[]) => events.reduce(memberDecider.evolve, memberDecider.initialState());
      const removed: MemberEvent = {
        type: 'MemberRemoved',
        data: { memberId: 'm1', partnerId: 'p1', sessionHashes: [], signedOutAt: iso(2) },
      };
      expect(invitationIsLive(state([invited]), at(1))).toBe(true);
      expect(invitationIsLive(state([invited]), at(72 * 60))).toBe(false);
      expect(invitationIsLive(state([invited, signedUp]), at(2))).toBe(false);
      expect(invitationIsLive(state([invited, signedUp, removed]), at(3))).toBe(false);
      expect(invitationIsLive(state([]), t0)).toBe(false);
    });
  });

  describe('with a second factor', () => {
    it('refuses the password alone', () => {
      given([invited, signedUp, enrolled])
        .when(signIn(), at(5))
        .then([failed('code')]);
    });
    it('signs in with a code of a later time step', () => {
      given([invited, signedUp, enrolled])
        .when(signIn({ totpStep: 101 }), at(5))
        .then([signedIn('s1', 5, 101)]);
    });
    it('refuses a code used already (its step or an earlier one)', () => {
      given([invited, signedUp, enrolled])
        .when(signIn({ totpStep: 100 }), at(5))
        .then([failed('code-reused')]);
      given([invited, signedUp, enrolled, signedIn('s1', 5, 101)])
        .when(signIn({ sessionHash: 's2', totpStep: 101 }), at(5))
        .then([failed('code-reused')]);
    });
  });
});

describe('password rules', () => {
  it('takes a long password unrelated to the email', () => {
    expect(passwordIssues('correct horse battery', 'correct horse battery', 'ada@example.com')).toEqual([]);
  });
  it.each([
    ['short', 'short'],
    ['ADA.Lovelace@example.com', 'the email'],
    ['my name is ADA.lovelace', 'the name'],
    ['aaaaaaaaaaaaaaaa', 'too few characters'],
  ])('refuses %s (%s)', (password) => {
    expect(passwordIssues(password, password, 'ada.lovelace@example.com').length).toBe(1);
  });
  it('refuses a confirmation that differs', () => {
    expect(passwordIssues('correct horse battery', 'correct horse batterx', 'ada@example.com')[0].field).toBe('password_confirmation');
  });

  it('removes a person: every live session ends, sign-in fails, and a new invitation starts afresh', () => {
    const removed = {
      type: 'MemberRemoved' as const,
      data: { memberId: 'm1', partnerId: 'p1', sessionHashes: ['s2'], signedOutAt: iso(20) },
    };
    given([invited, signedUp, signedIn('s1', 2), signedIn('s2', 13 * 60)])
      .when({ type: 'RemoveMember', data: { memberId: 'm1' } }, at(13 * 60 + 5))
      .then([{ ...removed, data: { ...removed.data, signedOutAt: iso(13 * 60 + 5) } }]);
    given([invited, signedUp, removed])
      .when({ type: 'RemoveMember', data: { memberId: 'm1' } }, at(21))
      .then([]);
    given([invited, signedUp, removed])
      .when(signIn(), at(21))
      .then([
        {
          type: 'MemberSignInFailed',
          data: { memberId: 'm1', partnerId: 'p1', reason: 'not-signed-up', address: '10.0.0.1', failedAt: iso(21) },
        },
      ]);
    given([invited, signedUp, removed])
      .when({ type: 'RefreshMemberSession', data: { memberId: 'm1', sessionHash: 's2' } }, at(21))
      .thenThrows(Unauthorized);
    given([invited, signedUp, removed])
      .when({ type: 'InviteMember', data: { ...invited.data, inviteHash: 'h-again', expiresAt: iso(100) } }, at(22))
      .then([{ type: 'MemberInvited', data: { ...invited.data, inviteHash: 'h-again', invitedAt: iso(22), expiresAt: iso(100) } }]);
  });
});
