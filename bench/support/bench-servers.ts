import { Redis } from 'ioredis';

/** The PostgreSQL server the distributed benches make their databases on (a superuser's URL). */
export const BENCH_POSTGRES = process.env.POSTGRES_BENCH_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The Redis the distributed benches keep their jobs in, under a prefix of each run's own. */
export const BENCH_REDIS = process.env.REDIS_BENCH_URL ?? 'redis://127.0.0.1:6379';

/** The URL of the database `name` on {@link BENCH_POSTGRES}. */
export function databaseUrl(name: string): string {
  const url = new URL(BENCH_POSTGRES);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Deletes every key of {@link BENCH_REDIS} whose name starts with `prefix` (a run's own). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(BENCH_REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
