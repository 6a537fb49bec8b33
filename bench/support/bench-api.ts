import { loadServiceConfig } from '@deals/runtime';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunningApi, startApi } from '../../apps/api/src/bootstrap';
import { quietStdout } from './quiet-stdout';

export interface BenchApi {
  api: RunningApi;
  /** The API's self-signed certificate and key, for the bare route and the load generator. */
  tls: { cert: string; key: string };
  origin: string;
}

/**
 * Budgets no bench reaches: each loads the API with one partner at thousands of requests a second.
 * The budgets are still counted on every request (their cost is in every figure); `env` may turn
 * them off (RATE_LIMITS=off), as the http-deal bench does to show that cost.
 */
export const BENCH_BUDGETS = { RATE_LIMIT_PER_MINUTE: '10000000', USER_TOKEN_RATE_LIMIT_PER_MINUTE: '10000000' };

/** Starts the real API on `dataDir` (warn-level logs, stdout quiet); the caller closes it. */
export async function startBenchApi(dataDir: string, demoData: 'on' | 'off' = 'off', env: Record<string, string> = {}): Promise<BenchApi> {
  const config = loadServiceConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DEMO_DATA: demoData,
    ...BENCH_BUDGETS,
    ...env,
  });
  const { result: api } = await quietStdout(() => startApi({ config }));
  const tls = {
    cert: readFileSync(join(dataDir, 'tls', 'self-signed.crt'), 'utf8'),
    key: readFileSync(join(dataDir, 'tls', 'self-signed.key'), 'utf8'),
  };
  return { api, tls, origin: `https://127.0.0.1:${api.port}` };
}
