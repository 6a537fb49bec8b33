import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';

const compiled = new Map<string, string>();

/**
 * The file a worker thread loads for a module, given its path without extension. Built code (dist)
 * has the compiled `.js` beside it. Run from TypeScript sources (jest, `node -r @swc-node/register`)
 * a worker would need a TypeScript loader of its own, which takes ~0.4 s to start; instead the
 * module and the relative modules it requires are compiled here with the same compiler
 * (@swc/core, a dev dependency) into a cache under node_modules (so packages resolve), keyed by
 * their content.
 */
export function workerModulePath(module: string): string {
  const base = module.replace(/\.(ts|js)$/, '');
  if (extname(__filename) === '.js') return `${base}.js`;
  const known = compiled.get(base);
  if (known) return known;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const swc = require('@swc/core') as typeof import('@swc/core');
  const nodeModules = resolve(dirname(require.resolve('@swc/core/package.json')), '..', '..');
  const root = dirname(nodeModules);
  const sources = new Map<string, string>();
  const visit = (file: string) => {
    if (sources.has(file)) return;
    const { code } = swc.transformSync(readFileSync(file, 'utf8'), {
      filename: file,
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    sources.set(file, code);
    for (const [, specifier] of code.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g))
      visit(resolve(dirname(file), `${specifier.replace(/\.(ts|js)$/, '')}.ts`));
  };
  visit(`${base}.ts`);
  const key = createHash('sha256')
    .update([...sources].flat().join('\0'))
    .digest('hex')
    .slice(0, 16);
  const dir = join(nodeModules, '.cache', 'deals-worker-modules', key);
  // Sources outside the folder holding node_modules (a git worktree sharing another's) stay under the
  // key's folder: their `..` steps are renamed, not taken (which would share one folder for all contents).
  const inCache = (file: string) => join(dir, relative(root, file).replace(/(^|[\\/])\.\.(?=[\\/]|$)/g, '$1_up'));
  for (const [file, code] of sources) {
    const target = inCache(file).replace(/\.ts$/, '.js');
    if (existsSync(target)) continue;
    mkdirSync(dirname(target), { recursive: true });
    // Another test process may write the same file at the same time: write apart, then rename.
    const partial = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, code);
    renameSync(partial, target);
  }
  const path = inCache(`${base}.js`);
  compiled.set(base, path);
  return path;
}
