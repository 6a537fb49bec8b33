/**
 * The built service on PostgreSQL and Redis as the distributed benches start it: its environment,
 * API processes on free ports, waiting for one to serve, and the whole start-up (partner,
 * catalogue, worker, API processes serving).
 */
import { ChildProcess } from 'node:child_process';
import { BENCH_BUDGETS } from './bench-api';
import { BENCH_REDIS, databaseUrl } from './bench-servers';
import type { CpuGroup, CpuGroups } from './cpu-groups';
import { httpsGet } from './https-get';
import {
  API_SCRIPT,
  createPartner,
  freePort,
  importCatalogue,
  serviceCertificate,
  startBuilt,
  until,
  WORKER_SCRIPT,
} from './service-processes';

/** The service's environment on the bench server's database `database`, its Redis keys under `prefix`, its files in `dataDir`. */
export function distributedEnv(dataDir: string, database: string, prefix: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl(database),
    REDIS_URL: BENCH_REDIS,
    REDIS_PREFIX: prefix,
    MONGO_URL: '',
    EVENTSTORE_URL: '',
    LOG_LEVEL: 'warn',
    DEMO_DATA: 'off',
    ...BENCH_BUDGETS,
  };
}

export interface ApiProcess {
  child: ChildProcess;
  origin: string;
}

interface ProcessOptions {
  logDir?: string;
  group?: { groups: CpuGroups; group: CpuGroup };
}

/**
 * Starts a built API process on a free port of 127.0.0.1 with `env`; a worker keeps its views
 * (RUN_PROJECTIONS off) unless `projections` is set. `logDir` and `group` as {@link startBuilt} takes them.
 */
export async function startApiProcess(
  env: Record<string, string>,
  name: string,
  { projections = false, ...options }: ProcessOptions & { projections?: boolean } = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const apiEnv = { ...env, PORT: String(port), HOST: '127.0.0.1', ...(projections ? {} : { RUN_PROJECTIONS: 'off' }) };
  return { child: startBuilt(API_SCRIPT, apiEnv, name, options), origin: `https://127.0.0.1:${port}` };
}

/** Waits until `origin` answers `GET path` (a path with its query) with 200. */
export async function untilServing(origin: string, ca: string, path: string): Promise<void> {
  await until(async () => (await httpsGet(`${origin}${path}`, ca)).status === 200, `${origin} serving`);
}

export interface StartedService {
  /** The partner's key, ready for a query string. */
  apiKey: string;
  worker: ChildProcess;
  apis: ApiProcess[];
  /** The API processes' certificate (PEM). */
  ca: string;
}

/**
 * The distributed mode started: a partner named `partner`, the demo regions and `deals` imported,
 * the worker, then `apis` API processes (`api-1`, …), each serving the last of `deals` (so the
 * views hold them all) before this resolves. Each child is pushed on `started` as soon as it
 * starts, for the caller to stop whatever happens; with `group`, each runs in the CPU group it
 * names for the child's name.
 */
export async function startService(
  env: Record<string, string>,
  options: {
    partner: string;
    deals: ReadonlyArray<{ id: string }>;
    apis?: number;
    started: ChildProcess[];
    logDir?: string;
    group?: (name: string) => ProcessOptions['group'];
  },
): Promise<StartedService> {
  const { deals, started, logDir, group = () => undefined } = options;
  const apiKey = encodeURIComponent(createPartner(env, options.partner));
  importCatalogue(env.DATA_DIR, env, deals);
  const worker = startBuilt(WORKER_SCRIPT, env, 'worker', { logDir, group: group('worker') });
  started.push(worker);
  const apis: ApiProcess[] = [];
  for (let n = 1; n <= (options.apis ?? 1); n++) {
    const api = await startApiProcess(env, `api-${n}`, { logDir, group: group(`api-${n}`) });
    started.push(api.child);
    apis.push(api);
  }
  const ca = await serviceCertificate(env.DATA_DIR);
  const last = deals[deals.length - 1];
  for (const { origin } of apis) await untilServing(origin, ca, `/deals/${encodeURIComponent(last.id)}?api_key=${apiKey}`);
  return { apiKey, worker, apis, ca };
}
