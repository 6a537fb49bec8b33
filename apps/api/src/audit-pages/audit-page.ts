import type { AuditedEvent, StreamVerification } from '@deals/kernel';
import Handlebars from 'handlebars';
import { createHash } from 'node:crypto';

/** The page's only style, inline and allowed by its hash: the page loads nothing and runs no script. */
const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; color: #1b1b1b; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ccc; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
caption { text-align: left; font-weight: 600; padding: 0.5rem 0; }
code { font-size: 0.85rem; word-break: break-all; }
.verified { background: #e6f4ea; border-left: 6px solid #137333; padding: 0.75rem 1rem; }
.failed { background: #fce8e6; border-left: 6px solid #a50e0e; padding: 0.75rem 1rem; }
.fails { color: #a50e0e; font-weight: 600; }
form p { display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; }
input { font: inherit; padding: 0.25rem; } button { font: inherit; padding: 0.25rem 0.75rem; }
.hint { color: #555; font-size: 0.85rem; }
`;

/** No script, no request anywhere, the one inline style above, never framed. */
export const AUDIT_PAGE_POLICY = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;

const PAGE = Handlebars.compile(
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{title}} · Audit</title>
<style>{{{style}}}</style>
</head>
<body>
<main>
<h1>{{title}}</h1>
<p class="hint">For auditors: every event that concerns it, in log order, with who caused it and its state after; its history checked against the log's seal and the checkpoints the service signed (key: <code>GET /audit/checkpoint-key</code>).</p>
{{#if verification.verified}}
<div class="verified" role="status"><p><strong>Verified</strong>: {{sealedCount}} sealed event{{#unless oneSealed}}s{{/unless}} of <code>{{stream}}</code> (the whole stream, now) match their seals and signed checkpoints{{#if unsealedCount}}; {{unsealedCount}} not sealed yet (the next checkpoint seals them){{/if}}.</p></div>
{{else}}
<div class="failed" role="alert"><p><strong>Not verified</strong> (the whole stream, now): {{verification.failure}}.</p></div>
{{/if}}
<form method="get" role="search">
  <p><label for="as_of">As of (ISO 8601 instant)</label> <input id="as_of" name="as_of" value="{{asOf}}" placeholder="2026-06-15T12:00:00Z"> <button type="submit">Show</button>{{#if asOf}} <a href="?">Now</a>{{/if}}</p>
</form>
<p>{{#if asOf}}As of <strong>{{asOf}}</strong>{{else}}Now{{/if}}: <strong>{{stateNow}}</strong>.</p>
<table>
  <caption>Timeline ({{entries.length}} event{{#unless oneEntry}}s{{/unless}})</caption>
  <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Actor</th><th scope="col">Request</th><th scope="col">State after</th><th scope="col">Seal</th></tr></thead>
  <tbody>
  {{#each entries}}
  <tr><td>{{time}}</td><td><strong class="type">{{type}}</strong><br><span class="hint">{{stream}} · position <code>{{position}}</code></span></td><td>{{actor}}</td><td><code>{{requestId}}</code></td><td>{{state}}</td><td{{#if fails}} class="fails"{{/if}}>{{seal}}</td></tr>
  {{/each}}
  </tbody>
</table>
</main>
</body>
</html>`,
  { strict: false },
);

/** One event of a page's timeline. */
export interface TimelineEntry extends AuditedEvent {
  /** The resource's state after it, in words. */
  state: string;
}

/**
 * An auditor's page of one resource: its timeline (to `asOf` when given), each event's seal result
 * where it is of the sealed stream, and the stream's verification.
 */
export function auditPage(options: {
  title: string;
  stream: string;
  entries: TimelineEntry[];
  verification: StreamVerification;
  asOf: Date | null;
}): string {
  const { title, stream, verification, asOf } = options;
  const results = new Map(verification.events.map((e) => [e.position, e.result]));
  const entries = options.entries
    .filter((entry) => !asOf || Date.parse(entry.occurredAt) <= asOf.getTime())
    .map((entry) => {
      const result =
        entry.stream === stream
          ? (results.get(entry.position) ?? 'not in the sealed stream')
          : `in ${entry.stream}: checked by audit:verify`;
      return {
        ...entry,
        time: entry.occurredAt,
        actor: entry.actor ?? '—',
        requestId: entry.requestId ?? '—',
        seal: result,
        fails: result.startsWith('does not match'),
      };
    });
  const sealedCount = verification.events.filter((e) => e.result !== 'not sealed yet').length;
  return PAGE({
    style: STYLE,
    title,
    stream,
    verification,
    sealedCount,
    oneSealed: sealedCount === 1,
    unsealedCount: verification.events.length - sealedCount,
    asOf: asOf?.toISOString() ?? '',
    stateNow: entries.at(-1)?.state ?? 'nothing yet',
    entries,
    oneEntry: entries.length === 1,
  });
}
