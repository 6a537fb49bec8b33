import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import { SECURITY } from './openapi';

/**
 * The kinds of credentials a call may be made with: a partner's live credentials, a sandbox's test
 * credentials, an auditor's, or none at all (`anyone`: a public page or picture).
 */
export type CallerKind = 'anyone' | 'partner' | 'sandbox' | 'auditor';

/** A user's access token may make the call, within a scope that names `resource`. */
export interface UserTokenCaller {
  userToken: string;
  /** The path's user may be given by email (`GET /users/:user_email/subscriptions`): the controller checks it is the token's. */
  pathUserMayBeEmail?: boolean;
}

export interface CallersDeclaration {
  kinds: readonly CallerKind[];
  userToken: UserTokenCaller | null;
}

export const CALLERS = 'deals:callers';

/** The description's extension naming who may call an operation (`user_token` for a user's access token). */
export const CALLERS_EXTENSION = 'x-callers';

/** A user's access token, within a scope naming `resource`, may make the call too. */
export const userToken = (resource: string, options: { pathUserMayBeEmail?: boolean } = {}): UserTokenCaller => ({
  userToken: resource,
  ...options,
});

/**
 * Declares who may call a route, once, beside it: {@link AccessGuard} refuses every other kind of
 * credentials (403), a route without a declaration refuses every credential, and the API
 * description lists the kinds under `x-callers` (a user's token also as its security).
 */
export function CalledBy(...callers: Array<CallerKind | UserTokenCaller>) {
  const kinds = callers.filter((c): c is CallerKind => typeof c === 'string');
  const token = callers.find((c): c is UserTokenCaller => typeof c !== 'string') ?? null;
  const declaration: CallersDeclaration = { kinds, userToken: token };
  return applyDecorators(
    SetMetadata(CALLERS, declaration),
    ApiExtension(CALLERS_EXTENSION, [...kinds, ...(token ? ['user_token'] : [])]),
    ...(token ? [ApiBearerAuth(SECURITY.bearer)] : []),
  );
}

/** Live partners and their sandboxes: most calls. */
export const PARTNERS = ['partner', 'sandbox'] as const;
