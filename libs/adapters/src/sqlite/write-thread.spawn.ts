import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { WriteThreadData } from './write-thread.protocol';

/** The files the worker loads: its entry, what the entry imports, and the programs module. */
const WORKER_FILES = ['write-thread.worker', 'open-durable-database'];

/**
 * Built code runs the compiled worker file. Run from TypeScript sources (jest, `node -r
 * @swc-node/register`), a worker would need a TypeScript loader of its own, which takes ~0.4 s to
 * start; instead the few files it loads are compiled here with the same compiler (@swc/core) into a
 * cache beside node_modules (so `better-sqlite3` resolves), keyed by their content.
 */
export function spawnWriteWorker(data: WriteThreadData): Worker {
  if (extname(__filename) === '.js') return new Worker(join(__dirname, 'write-thread.worker.js'), { workerData: data });
  const dir = compiledCopies([...WORKER_FILES.map((name) => join(__dirname, `${name}.ts`)), data.programs]);
  return new Worker(join(dir, 'write-thread.worker.js'), { workerData: { ...data, programs: join(dir, `${basename(data.programs, '.ts')}.js`) } });
}

const compiledDirs = new Map<string, string>();

function compiledCopies(files: string[]): string {
  const sources = files.map((file) => readFileSync(file, 'utf8'));
  const key = createHash('sha256').update(sources.join('\0')).digest('hex').slice(0, 16);
  const known = compiledDirs.get(key);
  if (known) return known;
  const dir = join(dirname(require.resolve('better-sqlite3/package.json')), '..', '.cache', 'deals-write-thread', key);
  mkdirSync(dir, { recursive: true });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const swc = require('@swc/core') as typeof import('@swc/core');
  files.forEach((file, i) => {
    const target = join(dir, `${basename(file, '.ts')}.js`);
    if (existsSync(target)) return;
    const { code } = swc.transformSync(sources[i], {
      filename: file,
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    // Another test process may write the same file at the same time: write apart, then rename.
    const partial = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, code);
    renameSync(partial, target);
  });
  compiledDirs.set(key, dir);
  return dir;
}
