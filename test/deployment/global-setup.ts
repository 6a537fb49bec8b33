import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_STATE, ENGINE_SCRIPT } from './engine-state';

/** Starts the deployment tests' Docker engine, or writes down why it cannot start (the suites then report themselves skipped). */
export default function startEngine(): void {
  let state: { dockerHost: string } | { why: string };
  try {
    state = { dockerHost: execFileSync(ENGINE_SCRIPT, ['start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim() };
  } catch (error) {
    const { stdout, message } = error as { stdout?: string; message: string };
    state = { why: stdout?.trim() || message };
  }
  mkdirSync(join(ENGINE_STATE, '..'), { recursive: true });
  writeFileSync(ENGINE_STATE, JSON.stringify(state));
}
