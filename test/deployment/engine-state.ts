import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Starts and stops the engine. */
export const ENGINE_SCRIPT = join(__dirname, 'docker-engine.sh');
/** What the global setup found: the engine's address, or why there is none. */
export const ENGINE_STATE = join(__dirname, '..', '..', 'test-output', 'docker-engine.json');

/** The engine's address (DOCKER_HOST), or why no engine runs. */
export function dockerEngine(): { dockerHost: string; why?: undefined } | { dockerHost?: undefined; why: string } {
  if (!existsSync(ENGINE_STATE)) return { why: 'no Docker engine was started (run these suites with npm run test:deployment)' };
  return JSON.parse(readFileSync(ENGINE_STATE, 'utf8'));
}
