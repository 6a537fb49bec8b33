import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildState, cachedHelp } = require('../../bin/cli-build') as {
  buildState(root: string): { state: 'missing' | 'stale' | 'fresh'; builtAt: number | null; newer?: string };
  cachedHelp(root: string, builtAt: number, args: string[], programName: string): string | null;
};

const MARK = '\u0000program\u0000';

/** A checkout of its own: a source, and optionally a build of it and help texts written after it. */
function checkout(dir: string, { built, help }: { built?: Date; help?: number | 'of-the-build' } = {}) {
  mkdirSync(join(dir, 'apps', 'cli', 'src'), { recursive: true });
  writeFileSync(join(dir, 'apps', 'cli', 'src', 'main.ts'), '');
  utimesSync(join(dir, 'apps', 'cli', 'src', 'main.ts'), new Date('2026-01-01'), new Date('2026-01-01'));
  if (!built) return;
  mkdirSync(join(dir, 'dist', 'apps', 'cli', 'src'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'apps', 'cli', 'src', 'main.js'), '');
  writeFileSync(join(dir, 'dist', '.tsbuildinfo'), '{}');
  utimesSync(join(dir, 'dist', '.tsbuildinfo'), built, built);
  if (help === undefined) return;
  const builtAt = help === 'of-the-build' ? built.getTime() : help;
  const texts = { builtAt, mark: MARK, root: `Usage: ${MARK} [options]\n`, commands: { 'jobs:list': `Usage: ${MARK} jobs:list\n` } };
  writeFileSync(join(dir, 'dist', 'apps', 'cli', 'help.json'), JSON.stringify(texts));
}

describe("the CLI's build, as bin/deals.js sees it before loading it", () => {
  const dir = tempDir('cli-build');
  afterAll(() => dir.remove());
  let n = 0;
  const fresh = () => join(dir.path, String(n++));

  it('is missing without a build, stale when a source is newer than it, fresh otherwise', () => {
    const none = fresh();
    checkout(none);
    expect(buildState(none).state).toBe('missing');
    const old = fresh();
    checkout(old, { built: new Date('2025-12-31') });
    expect(buildState(old)).toMatchObject({ state: 'stale', newer: join(old, 'apps', 'cli', 'src', 'main.ts') });
    const current = fresh();
    checkout(current, { built: new Date('2026-01-02') });
    expect(buildState(current)).toEqual({ state: 'fresh', builtAt: new Date('2026-01-02').getTime() });
  });

  it('answers --help and <command> --help from the texts written after this very build, with its own name', () => {
    const built = new Date('2026-01-02');
    const root = fresh();
    checkout(root, { built, help: 'of-the-build' });
    expect(cachedHelp(root, built.getTime(), ['--help'], 'deals')).toBe('Usage: deals [options]\n');
    expect(cachedHelp(root, built.getTime(), ['jobs:list', '-h'], 'npm run cli --')).toBe('Usage: npm run cli -- jobs:list\n');
    // Anything else runs the CLI itself: another command, more arguments, no help asked.
    expect(cachedHelp(root, built.getTime(), ['unknown:command', '--help'], 'deals')).toBeNull();
    expect(cachedHelp(root, built.getTime(), ['jobs:list', '--json', '--help'], 'deals')).toBeNull();
    expect(cachedHelp(root, built.getTime(), ['jobs:list'], 'deals')).toBeNull();
    const older = fresh();
    checkout(older, { built, help: built.getTime() - 1 });
    expect(cachedHelp(older, built.getTime(), ['--help'], 'deals')).toBeNull();
  });
});

describe('bin/deals.js', () => {
  const root = join(__dirname, '..', '..');

  it('answers with the very texts the CLI prints itself, written as the build writes them', () => {
    const dir = tempDir('cli-help');
    try {
      const file = join(dir.path, 'help.json');
      const cli = (args: string[], env: Record<string, string> = {}) =>
        execFileSync(process.execPath, ['-r', '@swc-node/register', 'apps/cli/src/main.ts', ...args], {
          cwd: root,
          encoding: 'utf8',
          env: { ...process.env, DATA_DIR: join(dir.path, 'data'), LOG_LEVEL: 'silent', ...env },
        });
      cli([], { DEALS_CLI_WRITE_HELP: '42', DEALS_CLI_HELP_FILE: file });
      mkdirSync(join(dir.path, 'dist', 'apps', 'cli'), { recursive: true });
      renameSync(file, join(dir.path, 'dist', 'apps', 'cli', 'help.json'));
      const name = `node ${join('apps', 'cli', 'src', 'main.ts')}`;
      expect(cachedHelp(dir.path, 42, ['--help'], name)).toBe(cli(['--help']));
      expect(cachedHelp(dir.path, 42, ['jobs:list', '--help'], name)).toBe(cli(['jobs:list', '--help']));
    } finally {
      dir.remove();
    }
  }, 30_000);

  it('refuses to run without a build, saying how to make one', () => {
    const dir = tempDir('cli-unbuilt');
    try {
      mkdirSync(join(dir.path, 'bin'));
      for (const file of ['deals.js', 'cli-build.js']) writeFileSync(join(dir.path, 'bin', file), readFileSync(join(root, 'bin', file)));
      const ran = spawnSync(process.execPath, [join(dir.path, 'bin', 'deals.js'), '--help'], { encoding: 'utf8' });
      expect(ran.status).toBe(1);
      expect(ran.stderr).toContain('run `npm run build`');
    } finally {
      dir.remove();
    }
  });
});
