import { Clock, CommandCaller, EventStore, handleCommand, IdGenerator, laterPosition, loadAggregate, LogPosition, ValidationFailed, ValidationIssue } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { ClaimEmail, emailClaimDecider, emailClaimStream } from '../domain/user/email-claim.decider';
import { passwordIssues, readProfile } from '../domain/user/user-profile';
import { userDecider } from '../domain/user/user.decider';
import { emailKey, UserProfile, userStream } from '../domain/user/user.events';
import { AccountsSettings } from './accounts-settings';
import { hashPassword } from './password-hash';
import type { UserInput } from './user.commands';

type Caller = CommandCaller & { partnerId: string };

/**
 * The user writes shared by create, update and update-by-email: field checks, the email claim that
 * keeps addresses unique per partner, the password hash, and the user stream itself.
 */
@Injectable()
export class UserWrites {
  constructor(private readonly store: EventStore, private readonly clock: Clock, private readonly ids: IdGenerator, private readonly settings: AccountsSettings) {}

  async register(input: UserInput, byPartner: boolean, caller: Caller): Promise<{ userId: string; position: LogPosition | null }> {
    const now = this.clock.now();
    const { profile, issues } = readProfile(input, now);
    if (input.email === undefined) issues.push({ type: 'missing_field', resource: 'user', field: 'email', message: 'is required' });
    issues.push(...this.partnerOnly(input, byPartner));
    const credits = input.credits === undefined ? this.settings.signupCreditCents : input.credits;
    if (!Number.isSafeInteger(credits) || (credits as number) < 0) issues.push({ type: 'invalid', resource: 'user', field: 'credits', message: 'must be whole cents, not negative' });
    if (input.session_id !== undefined && typeof input.session_id !== 'string') issues.push({ type: 'invalid', resource: 'user', field: 'session_id', message: 'must be text' });
    if (issues.length) throw new ValidationFailed(issues);
    const userId = this.ids.next();
    const claimed = await this.claim(caller, emailKey(profile.email!), userId);
    const full: UserProfile = { email: profile.email!, firstName: null, lastName: null, birthday: null, postalCode: null, source: null, token: null, partnerData: {}, ...profile };
    const { position } = await handleCommand(this.store, userStream(userId), userDecider, {
      type: 'RegisterUser',
      data: { userId, partnerId: caller.partnerId, profile: full, credits: credits as number, sessionId: (input.session_id as string) ?? null, registeredAt: now.toISOString() },
    }, { now, metadata: caller });
    return { userId, position: laterPosition(claimed, position) };
  }

  async update(userId: string, input: UserInput, byPartner: boolean, caller: Caller): Promise<{ userId: string; position: LogPosition | null }> {
    const now = this.clock.now();
    const { profile, issues } = readProfile(input, now);
    issues.push(...this.partnerOnly(input, byPartner));
    if (input.is_deleted !== undefined && typeof input.is_deleted !== 'boolean') issues.push({ type: 'invalid', resource: 'user', field: 'is_deleted', message: 'must be true or false' });
    if (input.pass !== undefined || input.pass_confirmation !== undefined) issues.push(...passwordIssues(input.pass, input.pass_confirmation));
    if (issues.length) throw new ValidationFailed(issues);
    const current = await loadAggregate(this.store, userStream(userId), userDecider);
    let position: LogPosition | null = null;
    const oldKey = current.state.profile ? emailKey(current.state.profile.email) : null;
    const newKey = profile.email !== undefined ? emailKey(profile.email) : oldKey;
    // Ownership first (the decider checks it again), so a foreign user's email is never claimed.
    if (!current.state.registered || current.state.partnerId !== caller.partnerId) {
      await handleCommand(this.store, userStream(userId), userDecider, { type: 'UpdateUser', data: { userId, partnerId: caller.partnerId, changes: {} } }, { now, metadata: caller });
    }
    if (newKey !== oldKey) position = await this.claim(caller, newKey!, userId);
    const passwordHash = typeof input.pass === 'string' ? await hashPassword(input.pass) : undefined;
    const updated = await handleCommand(this.store, userStream(userId), userDecider, {
      type: 'UpdateUser',
      data: { userId, partnerId: caller.partnerId, changes: profile, deleted: input.is_deleted as boolean | undefined, passwordHash },
    }, { now, metadata: caller });
    position = laterPosition(position, updated.position);
    if (newKey !== oldKey && oldKey !== null) {
      const released = await handleCommand(this.store, emailClaimStream(caller.partnerId, oldKey), emailClaimDecider, {
        type: 'ReleaseEmail', data: { partnerId: caller.partnerId, emailKey: oldKey, userId },
      }, { now, metadata: caller });
      position = laterPosition(position, released.position);
    }
    return { userId, position };
  }

  /** The user who owns an email address for this partner, if any. */
  async owner(partnerId: string, email: string): Promise<string | null> {
    const claim = await loadAggregate(this.store, emailClaimStream(partnerId, emailKey(email)), emailClaimDecider);
    return claim.state.owner;
  }

  private partnerOnly(input: UserInput, byPartner: boolean): ValidationIssue[] {
    if (byPartner) return [];
    return (['source', 'token'] as const)
      .filter((field) => input[field] !== undefined)
      .map((field) => ({ type: 'invalid' as const, resource: 'user', field, message: 'can be set with partner credentials only' }));
  }

  /**
   * Claims an address for a user. A claim left by a registration that never completed (its user
   * stream is empty) is released first.
   */
  private async claim(caller: Caller, key: string, userId: string): Promise<LogPosition | null> {
    const stream = emailClaimStream(caller.partnerId, key);
    const now = this.clock.now();
    const claim: ClaimEmail = { type: 'ClaimEmail', data: { partnerId: caller.partnerId, emailKey: key, userId } };
    const existing = await loadAggregate(this.store, stream, emailClaimDecider);
    const owner = existing.state.owner;
    if (owner !== null && owner !== userId && (await this.store.readStream(userStream(owner))).length === 0) {
      await handleCommand(this.store, stream, emailClaimDecider, { type: 'ReleaseEmail', data: { partnerId: caller.partnerId, emailKey: key, userId: owner } }, { now, metadata: caller });
    }
    return (await handleCommand(this.store, stream, emailClaimDecider, claim, { now, metadata: caller })).position;
  }
}
