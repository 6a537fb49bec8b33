/**
 * The built service run as real processes by the benches of the distributed mode (`replicas`,
 * `distributed`): the CLI for the catalogue and a partner, the API and the worker from dist/, a
 * free port, and waiting for them to serve.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { demoRegions } from '@deals/runtime/demo/demo-catalogue';
import type { CpuGroup, CpuGroups } from './cpu-groups';
import { ROOT } from './source-place';

export const API_SCRIPT = 'apps/api/src/main.js';
export const WORKER_SCRIPT = 'apps/worker/src/main.js';

/**
 * Starts a built script of dist/ (`apps/api/src/main.js`, …) with `env` added to this process's;
 * with `logDir` its output goes to `<logDir>/<name>.log` (to see why an answer failed), else
 * nowhere; with `group` it runs in that CPU group from its start; `args` follow the script.
 */
export function startBuilt(
  script: string,
  env: Record<string, string>,
  name: string,
  { logDir, group, args = [] }: { logDir?: string; group?: { groups: CpuGroups; group: CpuGroup }; args?: string[] } = {},
): ChildProcess {
  const out = logDir ? openSync(join(logDir, `${name}.log`), 'a') : 'ignore';
  const options = { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', out, out] as ['ignore', typeof out, typeof out] };
  const file = script.startsWith('/') ? script : join(ROOT, 'dist', script);
  return group
    ? group.groups.spawn(group.group, process.execPath, [file, ...args], options)
    : spawn(process.execPath, [file, ...args], options);
}

/** Stops a process: SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Runs the built CLI with `args`; its standard output, or throws with its standard error. */
export function cli(args: string[], env: Record<string, string>): string {
  const child = spawnSync(process.execPath, [join(ROOT, 'dist/apps/cli/src/main.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`cli ${args.join(' ')}: ${child.stderr}`);
  return child.stdout;
}

/** A partner made with the CLI, with a budget no bench reaches; its api_key. */
export function createPartner(env: Record<string, string>, name: string): string {
  const partner = JSON.parse(cli(['partners:create', '--name', name, '--rate-limit', '10000000', '--json'], env)) as { api_key: string };
  return partner.api_key;
}

/** Imports the demo regions and `deals` (as `deals:import` reads them) with the CLI (files written to `dataDir`). */
export function importCatalogue(dataDir: string, env: Record<string, string>, deals: ReadonlyArray<object>): void {
  writeFileSync(join(dataDir, 'regions.json'), JSON.stringify(demoRegions()));
  writeFileSync(join(dataDir, 'deals.json'), JSON.stringify(deals));
  cli(['regions:import', join(dataDir, 'regions.json')], env);
  cli(['deals:import', join(dataDir, 'deals.json')], env);
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Polls `check` every 200 ms until it holds; throws after `ms`. */
export async function until(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The API's self-signed certificate (PEM), once the first API process on `dataDir` has written it. */
export async function serviceCertificate(dataDir: string): Promise<string> {
  const file = join(dataDir, 'tls', 'self-signed.crt');
  await until(async () => existsSync(file) && readFileSync(file, 'utf8').includes('END CERTIFICATE'), 'the TLS certificate');
  return readFileSync(file, 'utf8');
}
