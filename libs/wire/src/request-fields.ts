import { z } from 'zod';
import { flagValue, Paging, pagingIssues, wholeNumber } from './paging';
import { documented } from './typed-request';

/**
 * Field schemas the request DTOs are built from. Each keeps the message the interface's callers
 * have always been given for its field, and describes in OpenAPI what it accepts.
 */

/** Text that must be present and not empty: absent, null or '' is `missing_field` "is required". */
export const requiredText = (description?: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be a string') })
    .min(1, 'is required')
    .meta({ description });

/** Optional text: absent is undefined; anything but a string is `invalid`. */
export const optionalText = (description?: string, message = 'must be a string') =>
  z.string({ error: message }).optional().meta({ description });

/**
 * A true/false flag as a query string or JSON sends it: true, false, or "true"/"1"/"yes",
 * "false"/"0"/"no" (any case, trimmed); absent or empty is undefined.
 */
export const flag = (message = 'must be true or false', description?: string) =>
  z
    .union([z.boolean(), z.string(), z.number()], { error: message })
    .optional()
    .transform((value, ctx) => {
      const read = flagValue(value);
      if (read === null) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return read;
    })
    .meta({ description });

/** A whole number given as a JSON number or as digits (a query string's form); absent or empty is undefined. */
export const wholeNumberField = (message: string, check: (n: number) => boolean = () => true, description?: string) =>
  z
    .union([z.number(), z.string()], { error: message })
    .optional()
    .transform((value, ctx) => {
      const n = wholeNumber(value);
      if (n === null || (n !== undefined && !check(n))) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return n;
    })
    .meta({ description });

/** The list parameters count, per_page and page, as they are documented (read by `pagingIssues`, whatever they hold). */
const pagingShape = {
  count: documented('boolean', 'true: answer {status, count} instead of the list'),
  per_page: documented('integer', 'list size, 1 to 1000 (default 100); ignored with count'),
  page: documented('integer', 'page number from 1 (default 1); ignored with count'),
};

/**
 * A list call's parameters: `shape` plus count, per_page and page (docs/api.md, Paging), read into `paging`
 * (with count, per_page and page are ignored whatever they hold). `resource` names the entries' resource.
 */
export function withPaging<T extends z.ZodRawShape>(shape: T, resource: string) {
  return z
    .object({ ...shape, ...pagingShape })
    .meta({ 'x-resource': resource })
    .transform((value, ctx) => {
      const { count, per_page, page, ...rest } = value as Record<string, unknown>;
      const { paging, issues } = pagingIssues({ count, per_page, page }, resource);
      for (const issue of issues) ctx.addIssue({ code: 'custom', path: [issue.field!], message: issue.message });
      if (!paging) return z.NEVER;
      return { ...(rest as z.output<z.ZodObject<T>>), paging: paging as Paging };
    })
    .meta({ 'x-resource': resource });
}

const CURRENCY = 'must be usd: every amount is in US cents';

/**
 * The currency a caller says its amounts are in: the service's amounts are US cents, so `usd` (any
 * case) is taken and any other refused, rather than an amount in euros read as cents of a dollar.
 */
export const currencyField = () =>
  z
    .string({ error: CURRENCY })
    .nullish()
    .refine((value) => value === undefined || value === null || value.toLowerCase() === 'usd', CURRENCY)
    .meta({ description: "the amounts' currency: usd, the only one (any other is refused)", example: 'usd' });
