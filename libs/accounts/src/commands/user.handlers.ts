import { Clock, EventStore, handleCommand, loadAggregate, NotFound, UpdateFailed } from '@deals/kernel';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { accessTokenDecider, accessTokenStream, readGrant, tokenHash } from '../domain/access-token/access-token';
import { userDecider } from '../domain/user/user.decider';
import { userStream } from '../domain/user/user.events';
import { IssueAccessToken, RegisterUser, UpdateUser, UpdateUserByEmail } from './user.commands';
import { UserWrites } from './user-writes';

@CommandHandler(RegisterUser)
export class RegisterUserHandler implements ICommandHandler<RegisterUser> {
  constructor(private readonly users: UserWrites) {}
  execute({ input, byPartner, caller }: RegisterUser) {
    return this.users.register(input, byPartner, caller);
  }
}

@CommandHandler(UpdateUser)
export class UpdateUserHandler implements ICommandHandler<UpdateUser> {
  constructor(private readonly users: UserWrites) {}
  execute({ userId, input, byPartner, caller }: UpdateUser) {
    return this.users.update(userId, input, byPartner, caller);
  }
}

/**
 * Part 4.9's rules: a token sent and unchanged, or sent where none was stored, updates as usual;
 * a different token is replaced only with overwrite_token=true, else 422 update_failed; an unknown
 * email creates the user.
 */
@CommandHandler(UpdateUserByEmail)
export class UpdateUserByEmailHandler implements ICommandHandler<UpdateUserByEmail> {
  constructor(private readonly users: UserWrites, private readonly store: EventStore) {}

  async execute({ email, input, overwriteToken, caller }: UpdateUserByEmail) {
    const { email: _ignored, ...fields } = input;
    const owner = await this.users.owner(caller.partnerId, email);
    const user = owner ? await loadAggregate(this.store, userStream(owner), userDecider) : null;
    if (!owner || !user?.state.registered) return this.users.register({ ...fields, email }, true, caller);
    const stored = user.state.profile!.token;
    // Sent as null it is a change too (it would clear the token); text is compared as it is stored, trimmed.
    const sent = typeof fields.token === 'string' ? fields.token.trim() : fields.token;
    if (sent !== undefined && stored !== null && sent !== stored && !overwriteToken) {
      throw new UpdateFailed('the user has a different token; add overwrite_token=true to replace it');
    }
    return this.users.update(owner, fields, true, caller);
  }
}

@CommandHandler(IssueAccessToken)
export class IssueAccessTokenHandler implements ICommandHandler<IssueAccessToken> {
  constructor(private readonly store: EventStore, private readonly clock: Clock) {}

  async execute({ userId, input, caller }: IssueAccessToken) {
    const grant = readGrant(input);
    const now = this.clock.now();
    const user = await loadAggregate(this.store, userStream(userId), userDecider);
    if (!user.state.registered || user.state.partnerId !== caller.partnerId || user.state.deleted) throw new NotFound(`user ${userId} not found`);
    const tokenId = randomBytes(32).toString('base64url');
    const hash = tokenHash(tokenId);
    const { position } = await handleCommand(this.store, accessTokenStream(hash), accessTokenDecider, {
      type: 'IssueAccessToken',
      data: {
        tokenHash: hash, partnerId: caller.partnerId, userId, scope: grant.scope, access: grant.access,
        issuedAt: now.toISOString(), expiresAt: new Date(now.getTime() + grant.expiresIn * 1000).toISOString(),
      },
    }, { now, metadata: caller });
    return {
      tokenId, userId, expiresIn: grant.expiresIn, position,
      scope: grant.scope === 'all' ? 'all' : grant.scope.join(','), access: grant.access.join(','),
    };
  }
}
