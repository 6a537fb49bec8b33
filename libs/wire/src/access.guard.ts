import { Forbidden, NotFound } from '@deals/kernel';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthenticatedRequest, PartnerRef } from './authenticated-request';
import { CALLERS, CallerKind, CallersDeclaration } from './callers';
import { routedPath, SESSION_PATHS, TEST_CLOCK_HEADER } from './partner-auth.guard';

/** What each kind of caller is told when a call is not theirs to make. */
const REFUSALS: Record<Exclude<CallerKind, 'anyone'>, string> = {
  partner: "this call takes a sandbox's test credentials, not live ones",
  sandbox: "this call takes live credentials, not a sandbox's test ones",
  auditor: 'auditor credentials cannot make this call',
};

/** Why a partner's credentials may not make a call declared for `declared`; null when they may. */
function refusalOf(declared: CallersDeclaration, partner: PartnerRef): string | null {
  if (partner.role === 'auditor') return declared.kinds.includes('auditor') ? null : REFUSALS.auditor;
  if (declared.kinds.includes(partner.livemode ? 'partner' : 'sandbox')) return null;
  if (declared.kinds.length === 1 && declared.kinds[0] === 'auditor') return 'this call takes auditor credentials';
  return partner.livemode ? REFUSALS.partner : REFUSALS.sandbox;
}

/**
 * Rules on authenticated requests, from the route's {@link CalledBy}: a route declared for none of
 * the request's kind of credentials refuses it (403), and so does a route without a declaration;
 * an auditor reads and never writes; a user's access token works only where the route names a
 * resource for it, within its scope and access (GET reads, other methods write), and only on its
 * own user: another user's records are not found.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    // Public and operator paths carry no API credentials, and the partner site's pages a member's
    // session: their own hooks judged them.
    if (!request.partner || SESSION_PATHS.some((pattern) => pattern.test(routedPath(request)))) return true;
    const declared = this.reflector.get<CallersDeclaration | undefined>(CALLERS, context.getHandler());
    if (!declared) throw new Forbidden('this call is not open to API credentials');
    const writes = request.method !== 'GET' && request.method !== 'HEAD';
    const token = request.userToken;
    if (!token) {
      const refusal = refusalOf(declared, request.partner);
      if (refusal) throw new Forbidden(refusal);
      if (request.partner.role === 'auditor' && writes) throw new Forbidden('auditor credentials can read and never write');
      return true;
    }
    const allowed = declared.userToken;
    if (!allowed) throw new Forbidden('this call takes partner credentials, not a user access token');
    // The token's partner, live or sandbox, must be one the call is declared for.
    const refusal = refusalOf(declared, request.partner);
    if (refusal) throw new Forbidden(refusal);
    if (token.scope !== 'all' && !token.scope.includes(allowed.userToken))
      // eslint-disable-next-line no-restricted-syntax -- parameter names, counts and access words of ours
      throw new Forbidden(`the access token's scope does not include ${allowed.userToken}`);
    const needed = writes ? 'write' : 'read';
    // eslint-disable-next-line no-restricted-syntax -- parameter names, counts and access words of ours
    if (!token.access.includes(needed)) throw new Forbidden(`the access token does not allow ${needed} access`);
    const params = request.params as Record<string, string | undefined>;
    const pathUser = params.user_id ?? params.user;
    const byEmail = pathUser?.includes('@') && allowed.pathUserMayBeEmail === true;
    if (pathUser !== undefined && !byEmail && pathUser !== token.userId) throw new NotFound('user not found');
    return true;
  }
}

/**
 * Refuses a call made under a test clock where the sandbox's own account answers it (its webhook
 * endpoints, its users' access tokens): those belong to no clock's world.
 */
@Injectable()
export class NotUnderTestClock implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<AuthenticatedRequest>().testClock)
      throw new Forbidden(`this call acts on the sandbox itself: make it without ${TEST_CLOCK_HEADER}`);
    return true;
  }
}
