import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Handlebars from 'handlebars';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { answerRepeatsWithoutSecret } from '@deals/wire';
import { shownBack } from './form-fields';
import type { SiteRequest } from './site-state';

/** The templates and the stylesheet, beside the compiled code (scripts/build.js copies them into dist). */
export const TEMPLATES_DIR = join(__dirname, '..', 'templates');
export const STYLESHEET = join(__dirname, '..', 'assets', 'site.css');

/** The site's sections, in the order the navigation shows them. */
const SECTIONS = [
  { path: '/partner/keys', label: 'API keys' },
  { path: '/partner/password', label: 'v3 password' },
  { path: '/partner/usage', label: 'Usage' },
  { path: '/partner/batches', label: 'Email batches' },
  { path: '/partner/webhooks', label: 'Webhooks' },
  { path: '/partner/events', label: 'Events' },
  { path: '/partner/sandbox-mail', label: 'Sandbox mail' },
  { path: '/partner/lookup', label: 'Look-up' },
  { path: '/partner/erasures', label: 'Personal data' },
  { path: '/partner/settlements', label: 'Statements' },
  { path: '/partner/bulk-jobs', label: 'Bulk jobs' },
  { path: '/partner/settings', label: 'Settings' },
  { path: '/partner/security', label: 'Sign-in and security' },
];

/** A page's message, notice and errors, each of at most `MAX_SHOWN_TEXT` characters: whatever a refusal quotes of a client's input. */
function boundedTexts(model: Record<string, unknown>): Record<string, unknown> {
  const bounded: Record<string, unknown> = {};
  for (const name of ['message', 'notice']) if (typeof model[name] === 'string') bounded[name] = shownBack(model[name]);
  if (Array.isArray(model.errors)) bounded.errors = model.errors.map((error) => (typeof error === 'string' ? shownBack(error) : error));
  return bounded;
}

/**
 * Renders the site's pages: Handlebars templates (every value escaped unless a template says
 * otherwise), each inside one layout with the navigation, the member and the sign-out form.
 */
@Injectable()
export class SitePages {
  private readonly engine = Handlebars.create();
  private readonly templates = new Map<string, Handlebars.TemplateDelegate>();
  private readonly layout: Handlebars.TemplateDelegate;
  readonly stylesheet = readFileSync(STYLESHEET, 'utf8');

  constructor() {
    this.engine.registerHelper('eq', (a: unknown, b: unknown) => a === b);
    for (const file of readdirSync(TEMPLATES_DIR).filter((f) => f.endsWith('.hbs'))) {
      const source = readFileSync(join(TEMPLATES_DIR, file), 'utf8');
      const name = basename(file, '.hbs');
      if (name.startsWith('_')) this.engine.registerPartial(name.slice(1), source);
      else this.templates.set(name, this.engine.compile(source, { strict: false }));
    }
    this.layout = this.templates.get('layout')!;
  }

  /** The page `name` for this request, inside the layout; `model.title` names it. */
  render(request: FastifyRequest, name: string, model: Record<string, unknown> & { title: string }): string {
    const template = this.templates.get(name);
    if (!template) throw new Error(`no template ${name}`);
    const site = (request as SiteRequest).site;
    const path = request.routeOptions.url ?? '';
    const context = {
      ...model,
      ...boundedTexts(model),
      csrf: site?.csrfToken ?? '',
      member: site?.member ?? null,
      partner: site?.partner ?? null,
      path: request.url.split('?')[0],
    };
    const body = template(context);
    const sections = site?.member ? SECTIONS.map((s) => ({ ...s, current: path === s.path || path.startsWith(`${s.path}/`) })) : [];
    return this.layout({ ...context, body, sections });
  }

  /**
   * Answers a page that shows a secret once: a repeat of its form with the same `Idempotency-Key`
   * gets `withoutSecret` (the page as it is once the secret was shown), never the secret.
   */
  sendSecretOnce(
    request: FastifyRequest,
    reply: FastifyReply,
    name: string,
    model: Record<string, unknown> & { title: string },
    withoutSecret: Record<string, unknown> & { title: string },
    status = 200,
  ) {
    answerRepeatsWithoutSecret(request, { body: this.render(request, name, withoutSecret), contentType: 'text/html; charset=utf-8' });
    return this.send(request, reply, name, model, status);
  }

  /** Answers the page with its status. */
  send(request: FastifyRequest, reply: FastifyReply, name: string, model: Record<string, unknown> & { title: string }, status = 200) {
    return reply
      .status(status)
      .type('text/html; charset=utf-8')
      .send(this.render(request, name, model));
  }
}
