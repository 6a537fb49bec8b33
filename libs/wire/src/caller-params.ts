import { NotFound, RequestWrites, Unauthorized, ValidationFailed } from '@deals/kernel';
import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { requestWrites } from './answer-after-writes';
import type { AuthenticatedRequest, PartnerRef } from './authenticated-request';

/** The authenticated partner of this request. */
export const CurrentPartner = createParamDecorator((_: unknown, context: ExecutionContext): PartnerRef => {
  const partner = context.switchToHttp().getRequest<AuthenticatedRequest>().partner;
  if (!partner) throw new Unauthorized('not authenticated');
  return partner;
});

/**
 * Who asks and under which request id: goes into the metadata of every event a call appends.
 * `writes`: the request's tracker of those appends, which its answer waits for the views to show.
 */
export interface Caller {
  partnerId: string;
  actor: string;
  requestId: string;
  correlationId: string;
  writes?: RequestWrites;
}

export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.partner) throw new Unauthorized('not authenticated');
  const requestId = String(request.id);
  const correlation = request.headers['x-correlation-id'];
  return {
    partnerId: request.partner.id,
    actor: request.userToken ? `user-token:${request.userToken.userId}` : `partner:${request.partner.id}`,
    requestId,
    correlationId: typeof correlation === 'string' && correlation.length <= 128 ? correlation : requestId,
    writes: requestWrites(request),
  };
});

/**
 * The user a call acts for: the access token's user when a token authenticated the request (it
 * must match an explicit `user_id`, else the user is not found), otherwise the `user_id` given.
 * A `user_id` repeated in the query with one value is that value (as `api_key` is); with two, it
 * is refused.
 */
export function actingUser(request: AuthenticatedRequest, given: unknown): string | undefined {
  if (Array.isArray(given)) {
    const values = new Set(given);
    if (values.size !== 1 || typeof given[0] !== 'string')
      throw new ValidationFailed([
        { type: 'invalid', resource: 'request', field: 'user_id', message: 'is given more than once, with different values' },
      ]);
    given = given[0];
  }
  const token = request.userToken;
  if (!token) return typeof given === 'string' && given !== '' ? given : undefined;
  if (given !== undefined && given !== '' && given !== token.userId) throw new NotFound('user not found');
  return token.userId;
}

/** {@link actingUser}, which a call on `resource` needs: without one, `user_id` is a missing field. */
export function requiredActingUser(request: AuthenticatedRequest, given: unknown, resource: string): string {
  const userId = actingUser(request, given);
  if (!userId) throw new ValidationFailed([{ type: 'missing_field', resource, field: 'user_id', message: 'is required' }]);
  return userId;
}

/** Whether partner credentials (not a user's access token) authenticated the request. */
export const ByPartner = createParamDecorator(
  (_: unknown, context: ExecutionContext): boolean => !context.switchToHttp().getRequest<AuthenticatedRequest>().userToken,
);

/** The authenticated request itself (for {@link actingUser}). */
export const AuthRequest = createParamDecorator((_: unknown, context: ExecutionContext): AuthenticatedRequest =>
  context.switchToHttp().getRequest<AuthenticatedRequest>(),
);
