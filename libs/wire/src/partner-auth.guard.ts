import { DomainError, Forbidden, Unauthorized } from '@deals/kernel';
import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './error-body';

export interface PartnerRef {
  id: string;
  name: string;
  role: 'partner' | 'auditor';
}

/** Looks partners up by their credentials; implemented by the accounts context. */
export abstract class CredentialVerifier {
  abstract byApiKey(apiKey: string): Promise<PartnerRef | null>;
  abstract byUsernameAndPassword(username: string, password: string): Promise<PartnerRef | null>;
}

/** Paths anyone may call: the health report only. */
export const PUBLIC_PATHS = [/^\/health(\/|\?|$)/];

type AuthenticatedRequest = FastifyRequest & { partner?: PartnerRef };

async function basic(verifier: CredentialVerifier, request: FastifyRequest): Promise<PartnerRef> {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
  if (!match) throw new Unauthorized('missing credentials: give your username and password as HTTP basic credentials');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const partner = colon > 0 ? await verifier.byUsernameAndPassword(decoded.slice(0, colon), decoded.slice(colon + 1)) : null;
  if (!partner) throw new Unauthorized('wrong username or password');
  return partner;
}

async function apiKey(verifier: CredentialVerifier, request: FastifyRequest): Promise<PartnerRef> {
  const key = (request.query as Record<string, unknown> | undefined)?.api_key;
  if (typeof key !== 'string' || key === '') throw new Unauthorized('missing api_key: pass your partner API key as the api_key query parameter');
  const partner = await verifier.byApiKey(key);
  if (!partner) throw new Unauthorized('wrong api_key');
  return partner;
}

/**
 * Authenticates every request before routing, by the rules of its generation: HTTP basic
 * credentials (the userinfo of the address) on /api/v3, `api_key` in the query everywhere else.
 * Unknown paths are no exception, so nothing about the routes shows without credentials.
 */
export function authenticateEveryRequest(fastify: FastifyInstance, verifier: () => CredentialVerifier): void {
  fastify.addHook('onRequest', async (request: AuthenticatedRequest, reply: FastifyReply) => {
    if (PUBLIC_PATHS.some((path) => path.test(request.url))) return;
    try {
      request.partner = request.url.startsWith('/api/v3') ? await basic(verifier(), request) : await apiKey(verifier(), request);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (request.url.startsWith('/api/v3')) void reply.header('www-authenticate', 'Basic realm="deals", charset="UTF-8"');
      return reply.status(error.httpStatus).send(errorBody(error.errorType, error.message));
    }
  });
}

/** Role rules on authenticated requests: an auditor reads and never writes. */
@Injectable()
export class PartnerRoleGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (request.partner?.role === 'auditor' && request.method !== 'GET' && request.method !== 'HEAD') {
      throw new Forbidden('auditor credentials can read and never write');
    }
    return true;
  }
}

/** The authenticated partner of this request. */
export const CurrentPartner = createParamDecorator((_: unknown, context: ExecutionContext): PartnerRef => {
  const partner = context.switchToHttp().getRequest<AuthenticatedRequest>().partner;
  if (!partner) throw new Unauthorized('not authenticated');
  return partner;
});

/** Who asks and under which request id: goes into the metadata of every event a call appends. */
export interface Caller {
  partnerId: string;
  actor: string;
  requestId: string;
  correlationId: string;
}

export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.partner) throw new Unauthorized('not authenticated');
  const requestId = String(request.id);
  const correlation = request.headers['x-correlation-id'];
  return {
    partnerId: request.partner.id,
    actor: `partner:${request.partner.id}`,
    requestId,
    correlationId: typeof correlation === 'string' && correlation.length <= 128 ? correlation : requestId,
  };
});
