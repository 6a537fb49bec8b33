import type { CommandCaller, LogPosition } from '@deals/kernel';
import { Command } from '@nestjs/cqrs';
import type { TokenGrant } from '../domain/access-token/access-token';
import type { NewUser, UserChanges, UserChangesByEmail } from '../domain/user/user-profile';

export interface UserOutcome {
  userId: string;
  position: LogPosition | null;
}

/** POST /users. `byPartner` is false when a user's access token makes the call. */
export class RegisterUser extends Command<UserOutcome> {
  constructor(
    readonly user: NewUser,
    readonly byPartner: boolean,
    readonly caller: Required<Pick<CommandCaller, 'partnerId'>> & CommandCaller,
    /** The id to register the user under (a bulk job's item, which finds its user again when run twice); a new one by default. */
    readonly userId?: string,
  ) {
    super();
  }
}

/** PUT /users/:user_id. */
export class UpdateUser extends Command<UserOutcome> {
  constructor(
    readonly userId: string,
    readonly changes: UserChanges,
    readonly byPartner: boolean,
    readonly caller: Required<Pick<CommandCaller, 'partnerId'>> & CommandCaller,
  ) {
    super();
  }
}

export interface UserErasure {
  userId: string;
  erasedAt: string;
  position: LogPosition | null;
}

/** DELETE /users/:user_id/personal_data (a partner's: `caller.partnerId`), or an operator's `users:erase` (no partner). */
export class EraseUser extends Command<UserErasure> {
  constructor(
    readonly userId: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

/** The partner site's acknowledgement of an erasure (its member erased the partner's own copies). */
export class AcknowledgeUserErasure extends Command<LogPosition | null> {
  constructor(
    readonly userId: string,
    readonly caller: Required<Pick<CommandCaller, 'partnerId'>> & CommandCaller,
  ) {
    super();
  }
}

/** PUT /api/v1/users/:email/update_by_email: its token rules (docs/api.md). */
export class UpdateUserByEmail extends Command<UserOutcome> {
  constructor(
    readonly email: string,
    readonly changes: UserChangesByEmail,
    readonly overwriteToken: boolean,
    readonly caller: Required<Pick<CommandCaller, 'partnerId'>> & CommandCaller,
  ) {
    super();
  }
}

export interface IssuedToken {
  tokenId: string;
  userId: string;
  expiresIn: number;
  scope: string;
  access: string;
  position: LogPosition | null;
}

/** POST /users/:user/access_tokens (deprecated, served while it exists). */
export class IssueAccessToken extends Command<IssuedToken> {
  constructor(
    readonly userId: string,
    readonly grant: TokenGrant,
    readonly caller: Required<Pick<CommandCaller, 'partnerId'>> & CommandCaller,
    /** The partner's API key the request presented (see `PartnerRef.credentialId`). */
    readonly keyId?: string,
  ) {
    super();
  }
}
