import { CommandCaller, DomainError, PartnerCaller, Unauthorized, ValidationFailed } from '@deals/kernel';
import { requestWrites } from '@deals/wire';
import { ArgumentsHost, Catch, createParamDecorator, ExceptionFilter, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { shownBack } from './form-fields';
import type { SignedInMember } from './member-sessions';
import type { SiteRequest } from './site-state';
import { SitePages } from './site-pages';

/** The signed-in member of a page (the site's hook sent everyone else to the sign-in page). */
export const CurrentMember = createParamDecorator((_: unknown, context: ExecutionContext): SignedInMember => {
  const member = context.switchToHttp().getRequest<SiteRequest>().site?.member;
  if (!member) throw new Unauthorized('not signed in');
  return member;
});

/** Who acts, for the events a page's command appends: the member of their (live) partner, under the request's id. */
export function memberCaller(request: SiteRequest, member: SignedInMember): CommandCaller {
  const requestId = String(request.id);
  return {
    partnerId: member.partnerId,
    actor: `member:${member.memberId}`,
    requestId,
    correlationId: requestId,
    writes: requestWrites(request),
  };
}

/** Who acts on the account the pages show (the sandbox in test mode): for its keys, password, webhooks and settings. */
export const accountCaller = (request: SiteRequest, member: SignedInMember): PartnerCaller => ({
  ...memberCaller(request, member),
  partnerId: member.accountId,
});

/** A visitor's request, for the events of a sign-up or sign-in (the actor is set by the command). */
export function visitorCaller(request: SiteRequest): Omit<CommandCaller, 'actor'> {
  const requestId = String(request.id);
  return { requestId, correlationId: requestId, writes: requestWrites(request) };
}

/** The texts of a validation failure's entries, as a form shows them. */
export const issueTexts = (error: Pick<ValidationFailed, 'issues'>) =>
  error.issues.map((issue) => (issue.field ? `${issue.field.replace(/_/g, ' ')} ${issue.message}` : issue.message));

/** A refusal as the site's page: its title, and a form's problems one per line (the refusal of a bad form, wherever it is found). */
export function answerRefusalPage(pages: SitePages, request: FastifyRequest, reply: FastifyReply, refusal: DomainError) {
  const errors = refusal instanceof ValidationFailed ? issueTexts(refusal) : undefined;
  const title = refusal.httpStatus === 404 ? 'Not found' : 'Refused';
  return pages.send(
    request,
    reply,
    'message',
    // A message may quote what the client sent (an id, a value): shown back bounded.
    { title, message: errors ? 'The request could not be done.' : shownBack(refusal.message), errors },
    refusal.httpStatus,
  );
}

/**
 * A route's error handler for the site: a form's body refused before the page's handler (larger
 * than the site reads, of a type it does not take, unreadable) is answered as a page with the
 * refusal's status; any other failure goes on to the service's handler.
 */
export function answerUnreadableForms(pages: () => SitePages) {
  return (error: { code?: string; statusCode?: number }, request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (!error.code?.startsWith('FST_ERR_CTP_') || status >= 500) throw error;
    const message = status === 413 ? 'The form is larger than the site takes.' : 'The form could not be read.';
    return pages().send(request, reply, 'message', { title: 'Refused', message }, status);
  };
}

/** Refusals and failures of the site's pages, as pages (the API's filter answers JSON). */
@Catch()
@Injectable()
export class SitePageErrors implements ExceptionFilter {
  private readonly logger = new Logger('PartnerSite');

  constructor(private readonly pages: SitePages) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<SiteRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof DomainError) {
      void answerRefusalPage(this.pages, request, reply, exception);
      return;
    }
    const status = (exception as { getStatus?: () => number }).getStatus?.();
    if (status === 404) {
      void this.pages.send(request, reply, 'message', { title: 'Not found', message: 'There is no such page.' }, 404);
      return;
    }
    this.logger.error(`${request.method} ${request.routeOptions.url}: ${exception instanceof Error ? exception.stack : String(exception)}`);
    void this.pages.send(
      request,
      reply,
      'message',
      { title: 'Something went wrong', message: 'The page could not be shown; the failure is logged. Try again in a moment.' },
      500,
    );
  }
}
