import { loadServiceConfig } from '@deals/runtime/service-config';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const REPOSITORY = join(__dirname, '..', '..');
const TABLE = join(REPOSITORY, 'docs', 'configuration.md');

/** Variables read by code that are not settings of the service: the build's own and npm's. */
const NOT_SETTINGS = new Map([
  ['DEALS_CLI_WRITE_HELP', "the build's step that writes the CLI's help texts"],
  ['DEALS_CLI_HELP_FILE', 'where that step writes them (the build sets it)'],
  ['npm_lifecycle_event', 'set by npm: how the CLI names itself in its help'],
  ['PATH', "passed on by the build to the step that writes the CLI's help"],
]);

interface Row {
  name: string;
  embedded: string;
  distributed: string;
}

/** The rows of docs/configuration.md's table: one variable each, its default in each mode. */
function documentedRows(): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(TABLE, 'utf8').split('\n')) {
    const cells = line.split(' | ').map((c) => c.replace(/^\|\s*|\s*\|$/g, '').trim());
    const name = /^`([A-Za-z_][A-Za-z0-9_]*)`$/.exec(cells[0] ?? '')?.[1];
    if (name && cells.length >= 4) rows.push({ name, embedded: cells[1], distributed: cells[2] });
  }
  return rows;
}

/** Every variable `loadServiceConfig` reads, asked with `env` (a proxy records each name it asks for). */
function readByConfiguration(env: Record<string, string>): Set<string> {
  const asked = new Set<string>();
  loadServiceConfig(
    new Proxy(env, {
      get(target, key) {
        if (typeof key === 'string') asked.add(key);
        return target[key as string];
      },
    }),
  );
  return asked;
}

/**
 * Every variable the service's own code (apps, libs, bin, scripts; not its tests) names as
 * `process.env.NAME` or `process.env['NAME']`, and every `env.NAME` of the configuration's source,
 * read or not with the environments tried below (a read under a condition included).
 */
function readFromSources(): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|js)$/.test(entry) && !/\.spec\.ts$/.test(entry))
        for (const match of readFileSync(path, 'utf8').matchAll(/process\.env(?:\.|\[['"`])([A-Za-z_][A-Za-z0-9_]*)/g)) found.add(match[1]);
    }
  };
  for (const top of ['apps', 'libs', 'bin', 'scripts']) walk(join(REPOSITORY, top));
  const configuration = readFileSync(join(REPOSITORY, 'libs', 'runtime', 'src', 'service-config.ts'), 'utf8');
  for (const match of configuration.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) found.add(match[1]);
  return found;
}

/** A default written as one value in backticks (`3000`), without the words some cells add: that value. */
const literal = (cell: string) => /^`([^`]*)`$/.exec(cell)?.[1];

const EMBEDDED: Record<string, string> = {};
const DISTRIBUTED: Record<string, string> = { DATABASE_URL: 'postgres://deals@127.0.0.1:5432/deals' };

describe('docs/configuration.md: one table of every variable the service reads', () => {
  const rows = documentedRows();
  const documented = new Set(rows.map((r) => r.name));

  it('lists each variable once', () => {
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.length).toBe(documented.size);
  });

  it('lists every variable the configuration and the code read (none missing)', () => {
    const read = new Set([
      ...readByConfiguration(EMBEDDED),
      ...readByConfiguration(DISTRIBUTED),
      ...readByConfiguration({ ...DISTRIBUTED, METRICS_PORT: '9100', TLS_CERT_FILE: 'c', TLS_KEY_FILE: 'k', REDIS_URL: 'redis://r' }),
      ...readFromSources(),
    ]);
    const missing = [...read].filter((name) => !documented.has(name) && !NOT_SETTINGS.has(name));
    expect(missing).toEqual([]);
  });

  it('lists no variable that nothing reads any more (none stale)', () => {
    const read = new Set([...readByConfiguration(EMBEDDED), ...readByConfiguration(DISTRIBUTED), ...readFromSources()]);
    expect([...documented].filter((name) => !read.has(name))).toEqual([]);
  });

  it.each([
    ['embedded', EMBEDDED, (r: Row) => r.embedded],
    ['distributed', DISTRIBUTED, (r: Row) => r.distributed],
  ] as const)('gives each default written as a value as the one the configuration takes (%s)', (_mode, base, cell) => {
    const unset = loadServiceConfig({ ...base });
    const checked: string[] = [];
    for (const row of rows) {
      const value = literal(cell(row));
      if (value === undefined || row.name in base) continue;
      // The documented default, set explicitly, must change nothing.
      expect({ variable: row.name, config: loadServiceConfig({ ...base, [row.name]: value }) }).toEqual({
        variable: row.name,
        config: unset,
      });
      checked.push(row.name);
    }
    expect(checked.length).toBeGreaterThan(30);
  });
});
