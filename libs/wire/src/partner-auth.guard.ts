import { Forbidden, Unauthorized } from '@deals/kernel';
import { CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

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

const PUBLIC = 'deals:public';
/** Marks a route that needs no partner credentials (health only). */
export const Public = () => SetMetadata(PUBLIC, true);

type AuthenticatedRequest = FastifyRequest & { partner?: PartnerRef };

/**
 * Authenticates every request by the rules of its generation: HTTP basic credentials (the userinfo
 * of the address) on /api/v3, `api_key` in the query everywhere else. An auditor reads and never
 * writes.
 */
@Injectable()
export class PartnerAuthGuard implements CanActivate {
  constructor(private readonly reflector: Reflector, private readonly verifier: CredentialVerifier) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const partner = request.url.startsWith('/api/v3') ? await this.basic(request) : await this.apiKey(request);
    if (partner.role === 'auditor' && request.method !== 'GET' && request.method !== 'HEAD') {
      throw new Forbidden('auditor credentials can read and never write');
    }
    request.partner = partner;
    return true;
  }

  private async basic(request: FastifyRequest): Promise<PartnerRef> {
    const header = request.headers.authorization ?? '';
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    if (!match) throw new Unauthorized('missing credentials: give your username and password as HTTP basic credentials');
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const partner = colon > 0 ? await this.verifier.byUsernameAndPassword(decoded.slice(0, colon), decoded.slice(colon + 1)) : null;
    if (!partner) throw new Unauthorized('wrong username or password');
    return partner;
  }

  private async apiKey(request: FastifyRequest): Promise<PartnerRef> {
    const key = (request.query as Record<string, unknown> | undefined)?.api_key;
    if (typeof key !== 'string' || key === '') throw new Unauthorized('missing api_key: pass your partner API key as the api_key query parameter');
    const partner = await this.verifier.byApiKey(key);
    if (!partner) throw new Unauthorized('wrong api_key');
    return partner;
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
