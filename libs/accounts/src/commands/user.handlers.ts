import { Clock, EventStore, handleCommand, loadAggregate, NotFound, ValidationFailed } from '@deals/kernel';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { accessTokenDecider, accessTokenStream, tokenHash } from '../domain/access-token/access-token';
import { userDecider } from '../domain/user/user.decider';
import { userStream } from '../domain/user/user.events';
import { AcknowledgeUserErasure, EraseUser, IssueAccessToken, RegisterUser, UpdateUser, UpdateUserByEmail } from './user.commands';
import { UserWrites } from './user-writes';

@CommandHandler(RegisterUser)
export class RegisterUserHandler implements ICommandHandler<RegisterUser> {
  constructor(private readonly users: UserWrites) {}
  execute({ user, byPartner, caller, userId }: RegisterUser) {
    return this.users.register(user, byPartner, caller, userId);
  }
}

@CommandHandler(UpdateUser)
export class UpdateUserHandler implements ICommandHandler<UpdateUser> {
  constructor(private readonly users: UserWrites) {}
  execute({ userId, changes, byPartner, caller }: UpdateUser) {
    return this.users.update(userId, changes, byPartner, caller);
  }
}

@CommandHandler(EraseUser)
export class EraseUserHandler implements ICommandHandler<EraseUser> {
  constructor(private readonly users: UserWrites) {}
  async execute({ userId, caller }: EraseUser) {
    return { userId, ...(await this.users.erase(userId, caller.partnerId ?? null, caller)) };
  }
}

@CommandHandler(AcknowledgeUserErasure)
export class AcknowledgeUserErasureHandler implements ICommandHandler<AcknowledgeUserErasure> {
  constructor(private readonly users: UserWrites) {}
  execute({ userId, caller }: AcknowledgeUserErasure) {
    return this.users.acknowledgeErasure(userId, caller);
  }
}

/**
 * update_by_email's rules: a token sent and unchanged, or sent where none was stored, updates as usual;
 * a different token is replaced only with overwrite_token=true, else 422 update_failed; an unknown
 * email creates the user.
 */
@CommandHandler(UpdateUserByEmail)
export class UpdateUserByEmailHandler implements ICommandHandler<UpdateUserByEmail> {
  constructor(
    private readonly users: UserWrites,
    private readonly store: EventStore,
  ) {}

  async execute({ email, changes, overwriteToken, caller }: UpdateUserByEmail) {
    const { credits, sessionId, ...update } = changes;
    let owner = await this.users.owner(caller.partnerId, email);
    if (!owner) {
      try {
        const created = await this.users.register({ profile: { ...update.profile, email }, credits, sessionId }, true, caller);
        // Sent with is_deleted: true, the user is made as asked: deleted (a later is_deleted: false restores it).
        return update.deleted === true ? await this.users.update(created.userId, { profile: {}, deleted: true }, true, caller) : created;
      } catch (error) {
        // Another call is making the user with this email at this moment (an unknown email sent
        // twice at once): this one then updates that user, as if it had come a moment later.
        if (!(error instanceof ValidationFailed) || !error.issues.some((i) => i.field === 'email')) throw error;
        owner = await this.users.ownerOnceRegistered(caller.partnerId, email);
        if (!owner) throw error;
      }
    }
    // Rule 3 (a token sent as null is a change too; text is compared trimmed, as stored) is decided
    // with the update, on the user's stream as it is written, so calls at once cannot pass it by turns.
    return this.users.update(owner, update, true, caller, !overwriteToken);
  }
}

@CommandHandler(IssueAccessToken)
export class IssueAccessTokenHandler implements ICommandHandler<IssueAccessToken> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, grant, caller, keyId }: IssueAccessToken) {
    const now = this.clock.now();
    const user = await loadAggregate(this.store, userStream(userId), userDecider);
    if (user.state.status !== 'active' || user.state.partnerId !== caller.partnerId) throw new NotFound('user not found');
    const tokenId = randomBytes(32).toString('base64url');
    const hash = tokenHash(tokenId);
    const { position } = await handleCommand(
      this.store,
      accessTokenStream(hash),
      accessTokenDecider,
      {
        type: 'IssueAccessToken',
        data: {
          tokenHash: hash,
          partnerId: caller.partnerId,
          userId,
          scope: grant.scope,
          access: grant.access,
          issuedAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + grant.expiresIn * 1000).toISOString(),
          ...(keyId === undefined ? {} : { keyId }),
        },
      },
      { now, metadata: caller },
    );
    return {
      tokenId,
      userId,
      expiresIn: grant.expiresIn,
      position,
      scope: grant.scope === 'all' ? 'all' : grant.scope.join(','),
      access: grant.access.join(','),
    };
  }
}
