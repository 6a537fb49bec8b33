import { hashPassword, verifyPassword } from '@deals/accounts';
import { Clock, CommandCaller, EventStore, FairSlots, LogPosition, NotFound } from '@deals/kernel';
import { addressKey } from '@deals/wire';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { generateSecret, generateURI, verify } from 'otplib';
import { SESSION_LIFETIME_MS } from '../domain/member/member-rules';
import { totpSetUpAlready } from '../domain/member/member.decider';
import { MemberSignInFailed, SignInFailure } from '../domain/member/member.events';
import { loadMember, runOnMember } from './member-ids';
import { newSecret, seal, secretHash, SiteSecrets, unseal } from './site-secrets';

/** A hash no password matches, checked when the email is unknown, so that an answer takes as long either way. */
let decoy: Promise<string> | null = null;

const TOTP_ISSUER = 'Deals partner site';
/** Codes of the step before or after the current one are taken too (a clock a little off). */
const TOTP_TOLERANCE_S = 30;

export type SignInOutcome =
  | { signedIn: true; memberId: string; partnerId: string; sessionId: string; expiresAt: string }
  | { signedIn: false; reason: SignInFailure | 'unknown' };

/**
 * A sign-in attempt on the member the email given names (their id, `memberIdFor`), with password and
 * (once enrolled) a TOTP code; every attempt on a member is an event.
 */
export class SignInMember extends Command<SignInOutcome> {
  constructor(
    readonly memberId: string,
    readonly password: string,
    readonly code: string,
    readonly address: string,
    readonly caller: Omit<CommandCaller, 'actor'>,
  ) {
    super();
  }
}

@CommandHandler(SignInMember)
export class SignInMemberHandler implements ICommandHandler<SignInMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly secrets: SiteSecrets,
    private readonly hashing: FairSlots,
  ) {}

  async execute({ memberId, password, code, address, caller }: SignInMember): Promise<SignInOutcome> {
    const member = await loadMember(this.store, memberId);
    // Someone unknown, or invited and not signed up, takes as long to refuse as anyone: the time tells nothing.
    const passwordMatches = await this.hashing.run(addressKey(address), async () =>
      verifyPassword(password, member.status === 'active' ? member.passwordHash : await (decoy ??= hashPassword(newSecret()))),
    );
    if (member.status === 'none') return { signedIn: false, reason: 'unknown' };
    const now = this.clock.now();
    const secret = member.status === 'active' ? member.sealedTotpSecret : null;
    const totpStep = passwordMatches && secret ? await this.codeStep(memberId, secret, code, now) : null;
    const sessionId = newSecret();
    const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS).toISOString();
    const { events } = await runOnMember(
      this.store,
      memberId,
      { type: 'SignInMember', data: { memberId, sessionHash: secretHash(sessionId), expiresAt, address, passwordMatches, totpStep } },
      now,
      // A failed attempt is not the member's doing: it is recorded in their stream, by an anonymous actor.
      { ...caller, partnerId: member.partnerId, actor: passwordMatches ? `member:${memberId}` : 'anonymous' },
    );
    const failure = events.find((e): e is MemberSignInFailed => e.type === 'MemberSignInFailed');
    if (failure) return { signedIn: false, reason: failure.data.reason };
    return { signedIn: true, memberId, partnerId: member.partnerId, sessionId, expiresAt };
  }

  private async codeStep(memberId: string, sealed: string, code: string, now: Date): Promise<number | null> {
    const secret = unseal(this.secrets.sealingKey, sealed, totpContext(memberId));
    return secret === null ? null : matchingStep(secret, code, now);
  }
}

/** The time step a TOTP code of `secret` matches at `now` (or the step before or after), null for none. */
async function matchingStep(secret: string, code: string, now: Date): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({ secret, token: code, epoch: Math.floor(now.getTime() / 1000), epochTolerance: TOTP_TOLERANCE_S });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** What a sealed TOTP secret is bound to: its member. */
export const totpContext = (memberId: string) => `totp:${memberId}`;

/** A new TOTP secret for a member to enrol (RFC 6238: SHA-1, 6 digits, 30 s, as authenticator apps expect). */
export const newTotpSecret = (): string => generateSecret();

/** The otpauth address of a member's TOTP secret, for their app (as a QR code). */
export const totpUri = (email: string, secret: string) => generateURI({ issuer: TOTP_ISSUER, label: email, secret });

/**
 * Turns on a member's second factor once the first code of the new secret is right, the secret
 * sealed in the log; their password again, so that a session left open or stolen cannot lock its
 * owner out. A wrong password or code is recorded (`MemberReauthenticationFailed`), and answered alike.
 */
export class EnrolMemberTotp extends Command<{ enrolled: boolean; position: LogPosition | null }> {
  constructor(
    readonly memberId: string,
    readonly secret: string,
    readonly code: string,
    readonly password: string,
    readonly address: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(EnrolMemberTotp)
export class EnrolMemberTotpHandler implements ICommandHandler<EnrolMemberTotp> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly secrets: SiteSecrets,
    private readonly hashing: FairSlots,
  ) {}

  async execute({ memberId, secret, code, password, address, caller }: EnrolMemberTotp) {
    const member = await loadMember(this.store, memberId);
    if (member.status !== 'active') throw new NotFound('no such member');
    // Refused before the password is checked, so that this answer tells nothing of it.
    if (member.sealedTotpSecret !== null) throw totpSetUpAlready();
    const now = this.clock.now();
    const passwordMatches = await this.hashing.run(addressKey(address), () => verifyPassword(password, member.passwordHash));
    // The code is checked whatever the password: both failures take as long.
    const totpStep = await matchingStep(secret, code, now);
    const sealedSecret = seal(this.secrets.sealingKey, secret, totpContext(memberId));
    const { events, position } = await runOnMember(
      this.store,
      memberId,
      { type: 'EnrolMemberTotp', data: { memberId, sealedSecret, totpStep, passwordMatches, address } },
      now,
      caller,
    );
    return { enrolled: events.some((e) => e.type === 'MemberTotpEnrolled'), position };
  }
}
