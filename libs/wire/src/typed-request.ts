import { ValidationFailed, ValidationIssue } from '@deals/kernel';
import { ArgumentMetadata, createParamDecorator, ExecutionContext, Injectable, PipeTransform } from '@nestjs/common';
import { z } from 'zod';
import type { AuthenticatedRequest } from './authenticated-request';
import type { RequestDto } from './request-dto';

/**
 * Metadata a request schema carries: `x-resource` names the validation entries' `resource` for the fields below it
 * (the nearest one up the path wins), `issueType` the entry type of a refinement's failure.
 * `x-section` marks an object inside the body whose fields are named from it (the full purchase's user,
 * credit_card and shipping_address: the user's `email`, not `user.email`); an entry on the section
 * itself names the section.
 */
export interface RequestMeta {
  'x-resource'?: string;
  'x-section'?: boolean;
  [key: string]: unknown;
}

/** The issue `type` a custom refinement reports (`invalid` unless it says otherwise). */
export type IssueType = ValidationIssue['type'];

/** What a field a call does not describe is told. */
export const UNKNOWN_PARAMETER = 'is not a parameter of this call';

/** Fields whose message begins so are reported as `missing_field` (the entry type of an absent field). */
const MISSING = /^is required\b/;

function unwrap(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  for (let i = 0; i < 16; i++) {
    const def = (current as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'prefault' || def.type === 'readonly')
      current = def.innerType as z.ZodType;
    else if (def.type === 'pipe') current = pipeSource(def);
    else break;
  }
  return current;
}

/** The schema a pipe validates against: its input's, or, after a preprocessing function (`z.preprocess`), its output's. */
function pipeSource(def: Record<string, unknown>): z.ZodType {
  const input = def.in as z.ZodType;
  return (input as unknown as { _zod: { def: { type: string } } })._zod.def.type === 'transform' ? (def.out as z.ZodType) : input;
}

/**
 * The resource of the field at `path` (the `x-resource` meta of the nearest schema on the way to it)
 * and the field's name (the path, from the nearest `x-section` below which it lies).
 */
function locate(schema: z.ZodType, path: PropertyKey[], fallback: string): { resource: string; field: string } {
  // The root's resource: its own meta, or that of the schema a transform of it reads.
  let resource = fallback;
  for (let root: z.ZodType | undefined = schema, i = 0; root && i < 8; i++) {
    const found = (root.meta() as RequestMeta | undefined)?.['x-resource'];
    if (found) {
      resource = found;
      break;
    }
    const def: Record<string, unknown> = (root as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
    root = def.type === 'pipe' ? pipeSource(def) : undefined;
  }
  let from = 0;
  let current: z.ZodType | undefined = schema;
  for (const [index, key] of path.entries()) {
    if (!current) break;
    const inner = unwrap(current);
    const def = (inner as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === 'object') current = (def.shape as Record<string, z.ZodType>)[String(key)];
    else if (def.type === 'array') current = def.element as z.ZodType;
    else current = undefined;
    const meta = current?.meta() as RequestMeta | undefined;
    if (meta?.['x-resource']) resource = meta['x-resource'];
    if (meta?.['x-section']) from = Math.min(index + 1, path.length - 1);
  }
  return { resource, field: path.slice(from).map(String).join('.') };
}

/** The validation entries of a failed parse: one per problem, naming the field as the API names it. */
export function validationIssues(error: z.ZodError, schema: z.ZodType, fallbackResource = 'request'): ValidationIssue[] {
  return error.issues.flatMap((issue): ValidationIssue[] => {
    // A call that refuses what it does not describe (a strict object) names each such field.
    if (issue.code === 'unrecognized_keys') {
      const { resource, field } = locate(schema, issue.path, fallbackResource);
      return issue.keys.map((key) => ({ type: 'invalid', resource, field: field ? `${field}.${key}` : key, message: UNKNOWN_PARAMETER }));
    }
    const { resource, field } = locate(schema, issue.path, fallbackResource);
    const params = (issue as { params?: { issueType?: IssueType; resource?: string } }).params;
    const type: IssueType = params?.issueType ?? (MISSING.test(issue.message) ? 'missing_field' : 'invalid');
    return [{ type, resource: params?.resource ?? resource, ...(field ? { field } : {}), message: issue.message }];
  });
}

/**
 * Validates every `@Body()`, `@Query()`, `@Param()` and {@link RequestParameters} typed with a
 * request DTO (`createZodDto`) against its schema and hands the controller the parsed, typed value;
 * a failure is one `ValidationFailed` with every problem found (422 `validation_failed`).
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const dto = metadata.metatype as Partial<RequestDto> | undefined;
    if (!dto?.isRequestDto || !dto.schema) return value;
    const schema = dto.schema;
    // A body that is not a JSON object carries no fields: each required one is reported missing.
    const input = metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value)) ? {} : value;
    const parsed = schema.safeParse(input);
    if (parsed.success) return parsed.data;
    throw new ValidationFailed(validationIssues(parsed.error, schema));
  }
}

/**
 * Runs a parser of the interface's own grammar (a v3 filter, the v1 list parameters) inside a zod
 * transform: its `ValidationFailed` entries become the schema's issues, with their type and resource.
 */
export function parsedBy<T>(ctx: z.RefinementCtx, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    for (const issue of error.issues) {
      ctx.addIssue({
        code: 'custom',
        path: issue.field ? [issue.field] : [],
        message: issue.message,
        params: { issueType: issue.type, resource: issue.resource },
      });
    }
    return z.NEVER;
  }
}

/** A parameter the schema documents while a parser of the call reads it (`parsedBy`). */
export const documented = (type: 'string' | 'integer' | 'number' | 'boolean', description: string, example?: unknown) =>
  z
    .unknown()
    .optional()
    .meta({ type, description, ...(example === undefined ? {} : { example }) });

/** Parameters a call does not take as its own: the credentials are read before routing. */
const CREDENTIALS = ['api_key', 'access_token'];

/**
 * The parameters of a GET call that takes them as a JSON object (the v1 and regional deal lists) or in the query
 * string: both merged (the body's win), without the credentials. A body that is not an object is refused.
 */
export const RequestParameters = createParamDecorator((_: unknown, context: ExecutionContext): Record<string, unknown> => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  const body = request.body;
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'body', message: 'must be a JSON object of parameters' }]);
  }
  const merged: Record<string, unknown> = {
    ...(request.query as Record<string, unknown>),
    ...(body as Record<string, unknown> | undefined),
  };
  for (const name of CREDENTIALS) delete merged[name];
  return merged;
});

/**
 * The body of a call that takes none: a field sent there is refused (422 naming it), as on every
 * call that refuses what it does not describe. Describes no body in the API description.
 */
export const NoBody = createParamDecorator((_: unknown, context: ExecutionContext): void => {
  const body = context.switchToHttp().getRequest<AuthenticatedRequest>().body;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const fields = Object.keys(body);
  if (fields.length > 0)
    throw new ValidationFailed(fields.map((field) => ({ type: 'invalid', resource: 'request', field, message: UNKNOWN_PARAMETER })));
});
