import { unknownWords } from '@deals/kernel';
import { z } from 'zod';
import { requestDto } from '@deals/wire';
import { MAX_TOKEN_LIFE_SECONDS, TOKEN_RESOURCES, TokenAccess, TokenResource } from '../domain/access-token/access-token';

const EXPIRES_IN = `must be whole seconds from 1 to ${MAX_TOKEN_LIFE_SECONDS}`;
const SCOPE_REQUIRED = 'is required: resource names separated by commas, or all';
const ACCESS_REQUIRED = 'is required: read, write or read,write';

/** POST /users/:user/access_tokens body: how long the token lives, what it may touch, and how. */
export const issueAccessTokenBody = z
  .object({
    expires_in: z
      .union([z.number(), z.string()], {
        error: (issue) => (issue.input === undefined ? 'is required' : EXPIRES_IN),
      })
      .transform((value, ctx) => {
        const seconds = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
        if (!Number.isSafeInteger(seconds) || (seconds as number) < 1 || (seconds as number) > MAX_TOKEN_LIFE_SECONDS) {
          ctx.addIssue({ code: 'custom', message: EXPIRES_IN });
          return z.NEVER;
        }
        return seconds as number;
      })
      .meta({ description: `seconds of life, 1 to ${MAX_TOKEN_LIFE_SECONDS}`, example: 3600 }),
    scope: z
      .string({ error: SCOPE_REQUIRED })
      .transform((text, ctx): TokenResource[] | 'all' => {
        const trimmed = text.trim();
        if (trimmed === '') {
          ctx.addIssue({ code: 'custom', message: SCOPE_REQUIRED });
          return z.NEVER;
        }
        if (trimmed === 'all') return 'all';
        const names = text.split(',').map((s) => s.trim());
        const unknown = names.filter((n) => !(TOKEN_RESOURCES as readonly string[]).includes(n));
        if (unknown.length) {
          ctx.addIssue({
            code: 'custom',
            message: `names ${unknownWords(unknown)}; known resources: ${TOKEN_RESOURCES.join(', ')}, or all`,
          });
          return z.NEVER;
        }
        return [...new Set(names)] as TokenResource[];
      })
      .meta({ description: `comma-separated resource names (${TOKEN_RESOURCES.join(', ')}), or all`, example: 'user,credit_card' }),
    access: z
      .string({ error: ACCESS_REQUIRED })
      .transform((text, ctx) => {
        const compact = text.replace(/\s/g, '');
        if (!['read', 'write', 'read,write', 'write,read'].includes(compact)) {
          ctx.addIssue({ code: 'custom', message: 'must be read, write or read,write' });
          return z.NEVER;
        }
        return compact.split(',').sort() as TokenAccess[];
      })
      .meta({ description: 'read, write, or read,write', example: 'read,write' }),
  })
  .meta({ 'x-resource': 'access_token' });

export class IssueAccessTokenBody extends requestDto(issueAccessTokenBody) {}
