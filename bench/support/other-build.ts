/**
 * The other version `--against` runs: a folder as it is (already built), or a commit checked out
 * with `git worktree add` into `.bench-builds/<commit>` of this checkout and built there once,
 * with this checkout's node_modules linked in when both lock the same packages, else with its own
 * (`npm install` there: an older version may need packages this one dropped). The build is kept for
 * later runs against the same commit (`git worktree remove --force .bench-builds/<commit>` drops it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { underFolderLock } from '@deals/runtime';
import { ROOT } from './source-place';

/** The run-all that first ran each bench in a process of its own, the protocol `--against` speaks with the other side. */
export const EARLIEST_SUPPORTED = 'c1c47d2';
const RUN_ALL = join('dist', 'bench', 'run-all.js');
const BUILT = join('dist', '.bench-built');

export interface OtherBuild {
  /** The folder whose `dist/bench/run-all.js` runs the A side. */
  root: string;
  /** How the header names it: the folder, or the commit and its subject. */
  label: string;
}

function git(args: string[], cwd = ROOT): { ok: boolean; out: string; err: string } {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return { ok: run.status === 0, out: (run.stdout ?? '').trim(), err: (run.stderr ?? '').trim() };
}

/** The other version's built folder, made on first use for a commit; throws with the reason when it cannot be. */
export async function otherBuild(against: string): Promise<OtherBuild> {
  if (existsSync(against) && statSync(against).isDirectory()) {
    const root = resolve(against);
    checkRunAll(root, `${root} has no ${RUN_ALL}: run \`npm run build\` there first`);
    return { root, label: root };
  }
  const commit = git(['rev-parse', '--verify', '--quiet', `${against}^{commit}`]);
  if (!commit.ok) throw new Error(`--against=${against}: neither a folder nor a commit of this repository`);
  const sha = commit.out;
  const subject = git(['log', '-1', '--format=%s', sha]).out;
  const label = `${sha.slice(0, 7)} ${subject.length > 80 ? `${subject.slice(0, 79)}…` : subject}`;
  const root = join(ROOT, '.bench-builds', sha);
  // Two runs against one commit at once build it once.
  await underFolderLock(`${root}.lock`, async () => {
    if (existsSync(join(root, BUILT))) return;
    if (!existsSync(root)) {
      const added = git(['worktree', 'add', '--detach', root, sha]);
      if (!added.ok) throw new Error(`git worktree add ${root} ${sha}: ${added.err}`);
    }
    if (!existsSync(join(root, 'node_modules'))) {
      if (samePackages(root)) symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(root, 'node_modules'), 'dir');
      else {
        process.stderr.write(`installing ${label}'s own packages in ${root} (its lockfile differs from this one's) …\n`);
        const install = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 2, 2] });
        if (install.status !== 0) throw new Error(`npm install in ${root} failed (exit code ${install.status})`);
      }
    }
    process.stderr.write(`building ${label} in ${root} (once; kept for later runs) …\n`);
    const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
    if (build.status !== 0) throw new Error(`npm run build in ${root} failed (exit code ${build.status})`);
    writeFileSync(join(root, BUILT), `${sha}\n`);
  });
  checkRunAll(root, `${sha.slice(0, 7)}'s build has no ${RUN_ALL}`);
  return { root, label };
}

/** Whether the other version locks the very packages this checkout has installed. */
function samePackages(root: string): boolean {
  const lock = (dir: string) => (existsSync(join(dir, 'package-lock.json')) ? readFileSync(join(dir, 'package-lock.json'), 'utf8') : null);
  return lock(root) !== null && lock(root) === lock(ROOT);
}

/** The other side must run one bench per process and send its rows over IPC (`--child=<name>`), as run-all has since that commit. */
function checkRunAll(root: string, missing: string): void {
  const file = join(root, RUN_ALL);
  if (!existsSync(file)) throw new Error(missing);
  if (!readFileSync(file, 'utf8').includes('--child='))
    throw new Error(`${file} cannot run one bench in a process of its own (--child=): --against supports ${EARLIEST_SUPPORTED} and later`);
}
