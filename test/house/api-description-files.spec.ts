import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_DESCRIPTION_FILE, buildApiDescriptionFile } from '../../apps/api/src/api-description-file';
import { API_VERSION } from '../../apps/api/src/api-description';
import { OPERATION_IDS } from '../../apps/api/src/operation-ids';
import { tempDir } from '../support/temp-dir';

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** `same` when equal; otherwise what to run, and the first line that differs. */
function sameOrWhy(actual: string, committed: string, file: string, command: string): string {
  if (actual === committed) return 'same';
  const a = actual.split('\n');
  const c = committed.split('\n');
  const line = a.findIndex((text, i) => text !== c[i]);
  return `${file} is not current: run \`${command}\` and commit it (line ${line + 1}: ${JSON.stringify(c[line])} should be ${JSON.stringify(a[line])})`;
}

describe('the checked-in API description and client', () => {
  let built: string;
  beforeAll(async () => {
    built = await buildApiDescriptionFile();
  }, 60_000);

  it('openapi.json is the description the service serves', () => {
    expect(sameOrWhy(built, readFileSync(API_DESCRIPTION_FILE, 'utf8'), 'openapi.json', 'npm run openapi')).toBe('same');
  });

  it('names every operation from operation-ids.ts, each name once, and keeps no name of an operation gone', () => {
    const document = JSON.parse(built) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const described = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
        .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, id: operation.operationId })),
    );
    expect(described.filter(({ key }) => !(key in OPERATION_IDS)).map(({ key }) => key)).toEqual([]);
    expect(Object.keys(OPERATION_IDS).filter((key) => !described.some((d) => d.key === key))).toEqual([]);
    for (const { key, id } of described) expect([key, id]).toEqual([key, OPERATION_IDS[key]]);
    expect(new Set(Object.values(OPERATION_IDS)).size).toBe(Object.values(OPERATION_IDS).length);
  });

  it("describes package.json's version, which CHANGELOG.md and the client's package name", () => {
    const version = JSON.parse(read('package.json')).version as string;
    expect(API_VERSION).toBe(version);
    expect(read('CHANGELOG.md')).toContain(`## [${version}]`);
    expect(JSON.parse(read('clients/typescript/package.json')).version).toBe(version);
  });

  it('clients/typescript/src/schema.ts is what openapi-typescript generates from openapi.json', () => {
    const dir = tempDir('client');
    try {
      execFileSync(process.execPath, [join(root, 'scripts', 'generate-client.js'), dir.path], { cwd: root, stdio: 'pipe' });
      const generated = readFileSync(join(dir.path, 'schema.ts'), 'utf8');
      expect(sameOrWhy(generated, read('clients/typescript/src/schema.ts'), 'clients/typescript/src/schema.ts', 'npm run client')).toBe(
        'same',
      );
    } finally {
      dir.remove();
    }
  }, 60_000);
});
