import {
  Clock,
  CommandCaller,
  EventStore,
  handleCommand,
  handleCommands,
  IdGenerator,
  KeyedMutex,
  laterPosition,
  loadAggregate,
  LogPosition,
  NotFound,
  PartnerCaller,
  PersonalDataEventStore,
  slowHashes,
  ValidationFailed,
  ValidationIssue,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { ClaimEmail, emailClaimDecider, emailClaimStream, emailTaken } from '../domain/user/email-claim.decider';
import { BIRTHDAY_MESSAGE, isPastDate, NewUser, UserChanges } from '../domain/user/user-profile';
import { profileOf, userDecider } from '../domain/user/user.decider';
import { emailKey, legacyEmailKey, profileEmailKey, UserProfile, userStream } from '../domain/user/user.events';
import { AccountsSettings } from './accounts-settings';
import { hashPassword } from './password-hash';

/** How old a claim of an address its owner does not hold must be before another user may take it (see `claim`). */
export const STALE_CLAIM_MS = 60_000;
/** How long a call waits for a user another call is registering with the same email. */
const REGISTRATION_WAIT_MS = 3000;
const REGISTRATION_POLL_MS = 25;

/**
 * The user writes shared by create, update and update-by-email: the checks that need the clock or
 * the caller (the request schemas checked the fields), the email claim that keeps addresses unique
 * per partner, the password hash, and the user stream itself.
 */
@Injectable()
export class UserWrites {
  private readonly changes = new KeyedMutex();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly settings: AccountsSettings,
    private readonly personalData: PersonalDataEventStore,
  ) {}

  async register(
    user: NewUser,
    byPartner: boolean,
    caller: PartnerCaller,
    userId = this.ids.next(),
  ): Promise<{ userId: string; position: LogPosition | null }> {
    const now = this.clock.now();
    const { profile } = user;
    this.checkFields(profile, byPartner, now);
    const key = emailKey(profile.email);
    await this.refuseLegacyClaim(caller.partnerId, profile.email, userId);
    await this.releaseStaleClaim(caller, key, userId, now);
    const full: UserProfile = {
      firstName: null,
      lastName: null,
      birthday: null,
      postalCode: null,
      source: null,
      token: null,
      partnerData: {},
      ...profile,
    };
    // The address's claim and the new user's stream in one append (one transaction where the store
    // has them across streams; else the claim first): an address taken refuses both, and no claim is
    // left without its user. The claim's stream is the lane: registrations of one address take turns.
    const [claimed, registered] = await handleCommands(
      this.store,
      [
        {
          streamId: emailClaimStream(caller.partnerId, key),
          decider: emailClaimDecider,
          command: { type: 'ClaimEmail', data: { partnerId: caller.partnerId, emailKey: key, userId } } satisfies ClaimEmail,
          lane: true,
        },
        {
          streamId: userStream(userId),
          decider: userDecider,
          command: {
            type: 'RegisterUser',
            data: {
              userId,
              partnerId: caller.partnerId,
              profile: full,
              credits: user.credits ?? this.settings.signupCreditCents,
              sessionId: user.sessionId,
              registeredAt: now.toISOString(),
            },
          },
          freshStream: true,
        },
      ],
      { now, metadata: caller },
    );
    return { userId, position: laterPosition(claimed.position, registered.position) };
  }

  /**
   * Refuses, as {@link register} would, a new user it would refuse: a field the clock or the caller
   * rules out, or an address another user of the partner holds (a deleted one too). Writes nothing:
   * a dry run's check.
   */
  async checkRegistration(user: NewUser, byPartner: boolean, caller: PartnerCaller): Promise<void> {
    this.checkFields(user.profile, byPartner, this.clock.now());
    if ((await this.owner(caller.partnerId, user.profile.email)) !== null) throw emailTaken();
  }

  /**
   * Changes of one user run one at a time in this process: an email change works from the address
   * it read, and two at once would each release the other's (two users then shared an address).
   * Across processes, a release also keeps an address the user holds again (`release`).
   * `refuseOtherToken`: update_by_email without overwrite_token=true refuses a different token,
   * decided on the stream as written.
   */
  update(
    userId: string,
    changes: UserChanges,
    byPartner: boolean,
    caller: PartnerCaller,
    refuseOtherToken = false,
  ): Promise<{ userId: string; position: LogPosition | null }> {
    return this.changes.run(userId, () => this.updateNow(userId, changes, byPartner, caller, refuseOtherToken));
  }

  private async updateNow(
    userId: string,
    changes: UserChanges,
    byPartner: boolean,
    caller: PartnerCaller,
    refuseOtherToken: boolean,
  ): Promise<{ userId: string; position: LogPosition | null }> {
    const now = this.clock.now();
    const { profile } = changes;
    this.checkFields(profile, byPartner, now);
    const current = await loadAggregate(this.store, userStream(userId), userDecider);
    let position: LogPosition | null = null;
    const oldKey = profileEmailKey(profileOf(current.state));
    const newKey = profile.email !== undefined ? emailKey(profile.email) : oldKey;
    const update = {
      type: 'UpdateUser' as const,
      data: {
        userId,
        partnerId: caller.partnerId,
        changes: profile,
        deleted: changes.deleted,
        passwordHash: undefined as string | undefined,
        refuseOtherToken,
      },
    };
    // The decider's refusals (another partner's user, a deleted one) come before the new address is
    // claimed: a refused update must leave no claim behind. (The decider is pure: asked here, it
    // writes nothing; it decides again on the stream as it is when the update is appended.)
    userDecider.decide(update, current.state, now);
    if (newKey !== oldKey) {
      await this.refuseLegacyClaim(caller.partnerId, profile.email!, userId);
      position = await this.claim(caller, newKey!, userId);
    }
    const password = changes.password;
    update.data.passwordHash =
      password !== undefined ? await slowHashes.requests.run(caller.partnerId ?? '', () => hashPassword(password)) : undefined;
    let updated;
    try {
      updated = await handleCommand(this.store, userStream(userId), userDecider, update, { now, metadata: caller });
    } catch (error) {
      if (newKey !== oldKey) await this.release(caller, newKey!, userId).catch(() => undefined);
      throw error;
    }
    position = laterPosition(position, updated.position);
    if (newKey !== oldKey && oldKey !== null) position = laterPosition(position, await this.release(caller, oldKey, userId));
    return { userId, position };
  }

  /**
   * Erases a user's personal data, for good: its email claim given back (the address is free for a
   * new user), the erasure recorded on its stream, then its key deleted (every event of theirs reads
   * with their personal values gone, in every process, view and rebuild). `partnerId` null: an
   * operator's, of any partner's user. Asked again, it deletes the key if a stop left it, and
   * records nothing more (a start does the same for every erasure: {@link FinishErasures}).
   */
  erase(userId: string, partnerId: string | null, caller: CommandCaller): Promise<{ erasedAt: string; position: LogPosition | null }> {
    return this.changes.run(userId, async () => {
      const by = partnerId === null ? 'operator' : 'partner';
      const command = { type: 'EraseUserPersonalData' as const, data: { userId, partnerId, by } as const };
      const now = this.clock.now();
      const current = await loadAggregate(this.store, userStream(userId), userDecider);
      // Refuses another partner's user, or one that never was, before anything is touched.
      userDecider.decide(command, current.state, now);
      if (current.state.status === 'unregistered') throw new NotFound('user not found');
      const metadata = { ...caller, partnerId: current.state.partnerId };
      let position: LogPosition | null = null;
      const key = profileEmailKey(current.state.profile);
      if (key !== null) position = await this.release(metadata, key, userId, true);
      const erased = await handleCommand(this.store, userStream(userId), userDecider, command, { now, metadata });
      // The erasure's write leaves the user erased.
      if (erased.state.status !== 'erased') throw new Error('an erasure left its user not erased');
      await this.personalData.erase(userId, new Date(erased.state.erasedAt));
      return { erasedAt: erased.state.erasedAt, position: laterPosition(position, erased.position) };
    });
  }

  /** Records that the partner erased its own copies of an erased user's data (once; again: nothing more). */
  async acknowledgeErasure(userId: string, caller: PartnerCaller): Promise<LogPosition | null> {
    const command = { type: 'AcknowledgeUserErasure' as const, data: { userId, partnerId: caller.partnerId } };
    return (await handleCommand(this.store, userStream(userId), userDecider, command, { now: this.clock.now(), metadata: caller }))
      .position;
  }

  /**
   * The user who holds an email address for this partner, if any: the owner of its claim whose
   * current address it is. (A claim its owner no longer matches, left by an update that lost a race
   * with another, names nobody.)
   */
  async owner(partnerId: string, email: string): Promise<string | null> {
    const owner = await this.ownerOfClaim(partnerId, emailKey(email), emailKey);
    const legacy = legacyEmailKey(email);
    return owner ?? (legacy !== emailKey(email) ? this.ownerOfClaim(partnerId, legacy, legacyEmailKey) : null);
  }

  /** The owner of the claim under `key` (keyed by `keyOf`), if its current address still has that key. */
  private async ownerOfClaim(partnerId: string, key: string, keyOf: (email: string) => string): Promise<string | null> {
    const claim = await loadAggregate(this.store, emailClaimStream(partnerId, key), emailClaimDecider);
    const owner = claim.state.owner;
    if (owner === null) return null;
    const email = profileOf((await loadAggregate(this.store, userStream(owner), userDecider)).state)?.email;
    return typeof email === 'string' && keyOf(email) === key ? owner : null;
  }

  /**
   * An address whose key changed when addresses came to be compared in NFC, case-folded, is refused
   * while a user holds it under its claim of before (its lower case): read only for such addresses.
   */
  private async refuseLegacyClaim(partnerId: string, email: string, userId: string): Promise<void> {
    const legacy = legacyEmailKey(email);
    if (legacy === emailKey(email)) return;
    const owner = await this.ownerOfClaim(partnerId, legacy, legacyEmailKey);
    if (owner !== null && owner !== userId) throw emailTaken();
  }

  /**
   * The user another call is registering with `email` at this moment, once it holds the address
   * (polled for `waitMs` at most); null if none does by then.
   */
  async ownerOnceRegistered(partnerId: string, email: string, waitMs = REGISTRATION_WAIT_MS): Promise<string | null> {
    for (let waited = 0; ; waited += REGISTRATION_POLL_MS) {
      const owner = await this.owner(partnerId, email);
      if (owner || waited >= waitMs) return owner;
      await new Promise((resolve) => setTimeout(resolve, REGISTRATION_POLL_MS));
    }
  }

  /** Gives `userId`'s claim of an address back, unless the user holds that address (again) now (`evenHeld`: an erasure's, regardless). */
  private async release(caller: PartnerCaller, key: string, userId: string, evenHeld = false): Promise<LogPosition | null> {
    const user = await loadAggregate(this.store, userStream(userId), userDecider);
    if (!evenHeld && profileEmailKey(profileOf(user.state)) === key) return null;
    const released = await handleCommand(
      this.store,
      emailClaimStream(caller.partnerId, key),
      emailClaimDecider,
      {
        type: 'ReleaseEmail',
        data: { partnerId: caller.partnerId, emailKey: key, userId },
      },
      { now: this.clock.now(), metadata: caller },
    );
    return released.position;
  }

  /** The fields' checks that need the clock or the caller (the request schemas checked the rest). */
  private checkFields(profile: Partial<UserProfile>, byPartner: boolean, now: Date): void {
    const issues = [...this.pastBirthday(profile, now), ...this.partnerOnly(profile, byPartner)];
    if (issues.length) throw new ValidationFailed(issues);
  }

  /** Source and token are the partner's to set: a user's access token may not. */
  private partnerOnly(profile: Partial<UserProfile>, byPartner: boolean): ValidationIssue[] {
    if (byPartner) return [];
    return (['source', 'token'] as const)
      .filter((field) => profile[field] !== undefined)
      .map((field) => ({ type: 'invalid' as const, resource: 'user', field, message: 'can be set with partner credentials only' }));
  }

  /** A birthday must have passed by the service's clock (its form was checked with the request). */
  private pastBirthday(profile: Partial<UserProfile>, now: Date): ValidationIssue[] {
    const birthday = profile.birthday;
    if (typeof birthday !== 'string' || isPastDate(birthday, now)) return [];
    return [{ type: 'invalid', resource: 'user', field: 'birthday', message: BIRTHDAY_MESSAGE }];
  }

  /**
   * Claims an address for a user (an update's new address), once any stale claim of it is released
   * ({@link releaseStaleClaim}).
   */
  private async claim(caller: PartnerCaller, key: string, userId: string): Promise<LogPosition | null> {
    const now = this.clock.now();
    await this.releaseStaleClaim(caller, key, userId, now);
    const claim: ClaimEmail = { type: 'ClaimEmail', data: { partnerId: caller.partnerId, emailKey: key, userId } };
    return (await handleCommand(this.store, emailClaimStream(caller.partnerId, key), emailClaimDecider, claim, { now, metadata: caller }))
      .position;
  }

  /**
   * Releases a claim of an address whose owner does not hold it (its registration never completed,
   * or an update that claimed it lost a race and its user has another address), but only once it is
   * {@link STALE_CLAIM_MS} old: a younger one belongs to a registration or update still under way,
   * which would otherwise share the address with `userId`.
   */
  private async releaseStaleClaim(caller: PartnerCaller, key: string, userId: string, now: Date): Promise<void> {
    const stream = emailClaimStream(caller.partnerId, key);
    const history = await this.store.readStream(stream);
    const last = history[history.length - 1];
    const owner = last?.type === 'EmailClaimed' ? (last.data as { userId: string }).userId : null;
    if (owner === null || owner === userId || now.getTime() - Date.parse(last.metadata.occurredAt) < STALE_CLAIM_MS) return;
    const user = await loadAggregate(this.store, userStream(owner), userDecider);
    if (profileEmailKey(profileOf(user.state)) === key) return;
    await handleCommand(
      this.store,
      stream,
      emailClaimDecider,
      { type: 'ReleaseEmail', data: { partnerId: caller.partnerId, emailKey: key, userId: owner } },
      { now, metadata: caller },
    );
  }
}
