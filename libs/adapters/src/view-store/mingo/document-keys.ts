import { leafValues, parsePath } from './field-path';

export type KeyKind = 's' | 'n' | 'b';
export type Key = readonly [kind: KeyKind, value: string | number];
/** A row of a generation's keys table, without its document's id. */
export type KeyRow = [field: string, kind: KeyKind, value: string | number];

/** How a field's value is kept in the keys table; null for values it does not hold (objects, null, NaN). */
export const keyOf = (value: unknown): Key | null =>
  typeof value === 'string'
    ? ['s', value]
    : typeof value === 'number' && Number.isFinite(value)
      ? ['n', value]
      : typeof value === 'boolean'
        ? ['b', value ? 1 : 0]
        : null;

/**
 * The rows a document gives a disk generation's keys table: one per distinct value of each indexed
 * field (array elements each). Used on the event loop and on the write thread alike.
 */
export class DocumentKeys {
  /** The indexed fields the compiled paths can read, in the order given, without repeats. */
  readonly fields: readonly string[];
  readonly fieldSet: ReadonlySet<string>;
  private readonly paths: Array<[string, string[]]>;

  constructor(fields: readonly string[]) {
    this.paths = [...new Set(fields)].flatMap((field) => {
      const parts = parsePath(field);
      return parts ? [[field, parts] as [string, string[]]] : [];
    });
    this.fields = this.paths.map(([field]) => field);
    this.fieldSet = new Set(this.fields);
  }

  of(doc: object): KeyRow[] {
    return [...this.byText(doc).values()];
  }

  /** The rows by a text naming each (field, kind and value), to compare two versions' rows. */
  byText(doc: object): Map<string, KeyRow> {
    const keys = new Map<string, KeyRow>();
    for (const [field, parts] of this.paths)
      for (const value of leafValues(doc as Record<string, unknown>, parts)) {
        const key = keyOf(value);
        if (key) keys.set(`${field}\u0000${key[0]}\u0000${key[1]}`, [field, key[0], key[1]]);
      }
    return keys;
  }
}
