import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { ENGINE_SCRIPT, ENGINE_STATE } from './engine-state';

/** Stops the engine the setup started (and one an earlier run cut short left), and forgets it. */
export default function stopEngine(): void {
  try {
    execFileSync(ENGINE_SCRIPT, ['stop'], { stdio: 'inherit' });
  } finally {
    rmSync(ENGINE_STATE, { force: true });
  }
}
