import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { ENGINE_STATE, ENGINE_SCRIPT } from './engine-state';

/** Stops the engine the setup started, if it did. */
export default function stopEngine(): void {
  const state = JSON.parse(readFileSync(ENGINE_STATE, 'utf8')) as { dockerHost?: string };
  if (state.dockerHost) execFileSync(ENGINE_SCRIPT, ['stop'], { stdio: 'inherit' });
  rmSync(ENGINE_STATE, { force: true });
}
