import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { z } from 'zod';

/** A request part's type: instances are the schema's parsed value; the class carries the schema. */
export interface RequestDto<S extends z.ZodType = z.ZodType> {
  new (): z.output<S>;
  readonly schema: S;
  readonly isRequestDto: true;
}

/**
 * A typed request part (`@Body()`, `@Query()`, `@Param()`, {@link RequestParameters}) from its zod
 * schema: `RequestValidationPipe` parses what arrives with it, and {@link ApiRequest} describes it.
 */
export function requestDto<S extends z.ZodType>(schema: S): RequestDto<S> {
  class Dto {
    static readonly schema = schema;
    static readonly isRequestDto = true as const;
  }
  return Dto as unknown as RequestDto<S>;
}

/** Where the description keeps its named schemas. */
export const COMPONENT_SCHEMAS = '#/components/schemas/';

/** The named schemas met so far (a zod schema named with `.meta({ id })`), by name. */
const namedSchemas = new Map<string, SchemaObject>();

/**
 * The named schemas of the description (`components.schemas`), by name in alphabetical order: every
 * schema given an `id` in its zod metadata that an answer or a request described so far contains.
 */
export function componentSchemas(): Record<string, SchemaObject> {
  return Object.fromEntries([...namedSchemas.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The OpenAPI 3.0 schema of a zod schema: what a request may send (`input`) or what an answer holds
 * (`output`). A part named with `.meta({ id })` becomes a reference to `components.schemas`, so that
 * a client generator gives it a type of that name; a name describing two different schemas throws.
 */
export function openApiSchema(schema: z.ZodType, io: 'input' | 'output'): SchemaObject {
  const json = z.toJSONSchema(schema, { io, target: 'openapi-3.0', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  const definitions = (json.definitions ?? {}) as Record<string, SchemaObject>;
  delete json.definitions;
  const toComponents = <T>(value: T): T => JSON.parse(JSON.stringify(value).replace(/"#\/definitions\//g, `"${COMPONENT_SCHEMAS}`));
  for (const [name, definition] of Object.entries(toComponents(definitions))) {
    const known = namedSchemas.get(name);
    if (known && JSON.stringify(known) !== JSON.stringify(definition)) throw new Error(`two different schemas are named ${name}`);
    namedSchemas.set(name, definition);
  }
  return toComponents(json) as SchemaObject;
}

interface ObjectSchema {
  properties?: Record<string, SchemaObject & { description?: string }>;
  required?: string[];
}

/**
 * Describes a call's request in the API description from the same schemas that validate it: the
 * JSON body, each query parameter (or each JSON-on-GET parameter, in the query), each path part.
 */
export const ApiRequest = (parts: { body?: RequestDto; query?: RequestDto; params?: RequestDto }) => {
  const decorators: Array<MethodDecorator> = [];
  if (parts.body) decorators.push(ApiBody({ schema: openApiSchema(parts.body.schema, 'input') }));
  for (const [part, Decorator] of [
    [parts.query, ApiQuery],
    [parts.params, ApiParam],
  ] as const) {
    if (!part) continue;
    const schema = openApiSchema(part.schema, 'input') as ObjectSchema;
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const { description, ...rest } = property;
      decorators.push(
        (Decorator as typeof ApiQuery)({
          name,
          required: Decorator === ApiParam || (schema.required ?? []).includes(name),
          description,
          schema: rest,
        }),
      );
    }
  }
  return applyDecorators(...decorators);
};

export { ApiResponse };
