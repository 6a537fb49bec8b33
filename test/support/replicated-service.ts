import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './api-harness';
import { ApiProcess, freePort } from './api-process';
import { startFerretDB, type FerretDB } from './ferretdb';
import { databaseOfItsOwn } from './private-postgres';
import { startRedisServer } from './redis-server';
import { WorkerProcess } from './worker-process';

export interface ReplicatedServiceOptions {
  /** Names the PostgreSQL database (`deals_<label>`) and the Redis keys' prefix. */
  label: string;
  /** The data folder the processes share (secrets, TLS material). */
  dir: string;
  regions: unknown[];
  deals: unknown[];
  /** `partners:create` arguments for each partner made (`--json` added): their answers, in order. */
  partners: string[][];
  /** Where the views live: the log's PostgreSQL database, or a FerretDB of the suite's own (SQLite in a temporary folder). */
  views?: 'postgresql' | 'ferretdb';
  /** More for every process's environment. */
  env?: Record<string, string>;
  /** More for the worker's alone. */
  workerEnv?: Record<string, string>;
}

/**
 * The distributed mode as deployed, started for a suite: two API processes and a worker, all real,
 * on a PostgreSQL database of the suite's own (`databaseOfItsOwn`), a Redis of its own and, with
 * `views: 'ferretdb'`, the views on a FerretDB of its own (`MONGO_URL`). The catalogue is imported
 * and the partners made while the processes start; resolves once both replicas' views hold all of it.
 * `worker` and `replicas` are the suite's to replace (a restart): {@link ReplicatedService.stop} stops
 * whichever are there then.
 */
export async function startReplicatedService(options: ReplicatedServiceOptions): Promise<ReplicatedService> {
  const { label, dir } = options;
  const [database, redis, ferretdb] = await Promise.all([
    databaseOfItsOwn(label),
    startRedisServer(),
    options.views === 'ferretdb' ? startFerretDB() : null,
  ]);
  const service = new ReplicatedService(dir, database, redis, ferretdb, {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: label,
    ...(ferretdb ? { MONGO_URL: ferretdb.url, MONGO_DB: label } : {}),
    ...options.env,
  });
  writeFileSync(join(dir, 'regions.json'), JSON.stringify(options.regions));
  writeFileSync(join(dir, 'deals.json'), JSON.stringify(options.deals));
  const { env } = service;
  // Each process kept as soon as it runs, so that a failure of another part stops it too.
  const parts = await Promise.allSettled([
    Promise.all(
      options.partners.map((args) => runCli(dir, ['partners:create', ...args, '--json'], env).then((r) => JSON.parse(r.stdout))),
    ).then((partners) => void (service.partners = partners)),
    WorkerProcess.start(dir, { ...env, ...options.workerEnv }).then((worker) => void (service.worker = worker)),
    ...[0, 1].map(async (i) => void (service.replicas[i] = await ApiProcess.start(dir, await freePort(), env))),
    (async () => {
      for (const [command, file] of [
        ['regions:import', 'regions.json'],
        ['deals:import', 'deals.json'],
      ]) {
        const run = await runCli(dir, [command, join(dir, file)], env);
        if (run.code !== 0) throw new Error(`${command} failed: ${run.stdout}${run.stderr}`);
      }
    })(),
  ]);
  try {
    const failed = parts.find((part) => part.status === 'rejected');
    if (failed) throw failed.reason;
    // The worker has projected everything written: each replica reads the catalogue.
    await Promise.all(service.replicas.map((api) => api.ready()));
    return service;
  } catch (error) {
    await service.stop();
    throw error;
  }
}

export class ReplicatedService {
  /** `partners:create --json` answers, in the order asked. */
  partners: any[] = [];
  worker: WorkerProcess | null = null;
  replicas: ApiProcess[] = [];

  constructor(
    readonly dir: string,
    readonly database: { url: string; drop: () => Promise<void> },
    readonly redis: { url: string; stop(): Promise<void> },
    readonly ferretdb: FerretDB | null,
    /** What every process of the service is given. */
    readonly env: Record<string, string>,
  ) {}

  /** Everything stopped, the database dropped and the servers' folders removed (not the data folder: the suite's). */
  async stop(): Promise<void> {
    await Promise.all(this.replicas.filter(Boolean).map((api) => api.stop()));
    await this.worker?.stop();
    await this.redis.stop();
    await this.ferretdb?.stop();
    await this.database.drop();
  }
}
