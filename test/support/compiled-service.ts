import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'deals-test-build');
const TESTS = /\.(spec|int-spec|e2e-spec)\.ts$/;
const DAY_MS = 86_400_000;

/** Every file under `dir` (recursively), tests left out. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return TESTS.test(entry.name) ? [] : [path];
  });
}

/** The options jest compiles the sources with (.swcrc), and tsconfig's paths, so `@deals/*` imports become relative. */
function compilerOptions(): Record<string, any> {
  const swcrc = JSON.parse(readFileSync(join(ROOT, '.swcrc'), 'utf8'));
  delete swcrc.$schema;
  const tsconfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
  return { ...swcrc, sourceMaps: false, jsc: { ...swcrc.jsc, baseUrl: ROOT, paths: tsconfig.compilerOptions.paths } };
}

let tree: string | undefined;

/**
 * The service's sources (apps/ and libs/) compiled to JavaScript once for all the processes the tests
 * start, with the compiler and options jest uses: started from it, a process saves the second or so
 * a TypeScript loader takes to compile them at each start. Kept under node_modules/.cache (where
 * packages resolve), keyed by the sources' content and the compiler's version, so an edited source is compiled again; written
 * apart and renamed, as another jest worker may compile the same tree at the same time.
 */
function compiledTree(): string {
  if (tree) return tree;
  const files = ['apps', 'libs'].flatMap((dir) => filesUnder(join(ROOT, dir))).sort();
  const options = compilerOptions();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const swc = require('@swc/core') as typeof import('@swc/core');
  const hash = createHash('sha256').update(JSON.stringify(options)).update(swc.version);
  for (const file of files) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  const dir = join(CACHE, hash.digest('hex').slice(0, 16));
  if (!existsSync(dir)) {
    const partial = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    for (const file of files) {
      const target = join(partial, relative(ROOT, file));
      mkdirSync(dirname(target), { recursive: true });
      if (!file.endsWith('.ts')) copyFileSync(file, target);
      else
        writeFileSync(target.replace(/\.ts$/, '.js'), swc.transformSync(readFileSync(file, 'utf8'), { ...options, filename: file }).code);
    }
    try {
      renameSync(partial, dir);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another worker's came first
    }
  }
  // Marked as used now: trees (and partial ones) unused for a day go, never one a run still uses.
  writeFileSync(join(dir, '.used'), '');
  for (const name of readdirSync(CACHE)) {
    const other = join(CACHE, name);
    if (other === dir) continue;
    try {
      const used = existsSync(join(other, '.used')) ? statSync(join(other, '.used')).mtimeMs : statSync(other).mtimeMs;
      if (Date.now() - used > DAY_MS) rmSync(other, { recursive: true, force: true });
    } catch {
      // removed or renamed by another worker meanwhile
    }
  }
  return (tree = dir);
}

/** The compiled file of one of the service's entry points (`apps/api/src/main.ts`), to start with `node`. */
export function compiledEntry(entry: string): string {
  return join(compiledTree(), entry.replace(/\.ts$/, '.js'));
}
