import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/** A field of an event's data: its path of property names (`*` for the keys of a record), and a sample value of its type. */
export interface EventField {
  path: string[];
  /** Its keys are not known from the type (an index signature): whatever is under it is unnamed. */
  open: boolean;
}

/** An event type the service declares, where, its data's fields, and a payload of samples built from its type. */
export interface DeclaredEventType {
  type: string;
  file: string;
  fields: EventField[];
  sample: Record<string, unknown>;
}

/** How deep the walk goes into nested objects: deeper than any event's data. */
const MAX_DEPTH = 8;

/**
 * Every event type the sources of `libs/` declare (tests and the testing library aside), read with
 * the TypeScript compiler: each top-level type alias built on `DomainEvent<'Name', Data>` (also in an
 * intersection) and each interface extending `DomainEvent`, with every field of its data walked
 * through nested objects, arrays, unions, intersections and aliases. Each event's sample payload
 * gives every field a value: a text names its own path, so a test can look for it in what is written.
 */
export function declaredEventTypes(repositoryRoot: string): DeclaredEventType[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(repositoryRoot, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  )!;
  const sources = config.fileNames.filter(
    (file) => /\/libs\/[^/]+\/src\//.test(file) && !file.includes('/libs/testing/') && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(file),
  );
  const program = ts.createProgram(sources, { ...config.options, noEmit: true, incremental: false });
  const checker = program.getTypeChecker();
  const found: DeclaredEventType[] = [];
  const wanted = new Set(sources);
  for (const source of program.getSourceFiles()) {
    if (!wanted.has(source.fileName)) continue;
    for (const statement of source.statements) {
      if (!isEventDeclaration(statement)) continue;
      const event = checker.getTypeAtLocation(statement);
      const typeName = checker.getTypeOfSymbol(checker.getPropertyOfType(event, 'type')!);
      const where = `${relative(repositoryRoot, source.fileName)} (${statement.name.text})`;
      if (!typeName.isStringLiteral()) throw new Error(`${where}: an event whose type is not one name`);
      const fields: EventField[] = [];
      const data = checker.getTypeOfSymbol(checker.getPropertyOfType(event, 'data')!);
      const sample = sampleOf(checker, data, [], fields, 0);
      found.push({ type: typeName.value, file: where, fields, sample: sample as Record<string, unknown> });
    }
  }
  return found;
}

/** `type X = DomainEvent<…>` (or an intersection with one), or `interface X extends DomainEvent<…>`. */
function isEventDeclaration(node: ts.Node): node is ts.TypeAliasDeclaration | ts.InterfaceDeclaration {
  const namesEvent = (type: ts.Node): boolean =>
    (ts.isTypeReferenceNode(type) && type.typeName.getText() === 'DomainEvent') ||
    (ts.isIntersectionTypeNode(type) && type.types.some(namesEvent)) ||
    (ts.isParenthesizedTypeNode(type) && namesEvent(type.type));
  if (ts.isTypeAliasDeclaration(node)) return namesEvent(node.type);
  if (ts.isInterfaceDeclaration(node))
    return (node.heritageClauses ?? []).some((clause) => clause.types.some((type) => type.expression.getText() === 'DomainEvent'));
  return false;
}

/** A value of `type` (recording each field met under `path`): text naming its path, 1, true, the first literal of a union… */
function sampleOf(checker: ts.TypeChecker, type: ts.Type, path: string[], fields: EventField[], depth: number): unknown {
  const text = `sample:${path.join('.')}`;
  if (depth > MAX_DEPTH) return text;
  const present = checker.getNonNullableType(type);
  if (present.isUnion()) {
    // Every member's fields are walked; the sample takes an object member if there is one (it holds more).
    const members = present.types.map((member) => ({ member, value: sampleOf(checker, member, path, fields, depth) }));
    return (members.find(({ value }) => value !== null && typeof value === 'object') ?? members[0]).value;
  }
  if (present.isStringLiteral()) return present.value;
  if (present.isNumberLiteral()) return present.value;
  if (present.flags & ts.TypeFlags.BooleanLike) return true;
  if (present.flags & ts.TypeFlags.NumberLike) return 1;
  if (present.flags & ts.TypeFlags.StringLike) return text;
  if (checker.isArrayType(present) || checker.isTupleType(present)) {
    const [element] = checker.getTypeArguments(present as ts.TypeReference);
    return element ? [sampleOf(checker, element, path, fields, depth + 1)] : [];
  }
  if (!(present.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection))) return text;
  const sample: Record<string, unknown> = {};
  for (const property of checker.getPropertiesOfType(present)) {
    const at = [...path, property.name];
    fields.push({ path: at, open: false });
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    const propertyType = declaration ? checker.getTypeOfSymbolAtLocation(property, declaration) : checker.getTypeOfSymbol(property);
    sample[property.name] = sampleOf(checker, propertyType, at, fields, depth + 1);
  }
  for (const index of checker.getIndexInfosOfType(present)) {
    const at = [...path, '*'];
    fields.push({ path: at, open: true });
    sample[`sample-key-${path.join('.')}`] = sampleOf(checker, index.type, at, fields, depth + 1);
  }
  return sample;
}

/** The repository's root, from a file inside it. */
export const repositoryRootOf = (file: string): string => {
  let dir = dirname(file);
  while (!ts.sys.fileExists(join(dir, 'tsconfig.json'))) dir = dirname(dir);
  return dir;
};
