import { Client, Pool, PoolConfig } from 'pg';

/** How long taking a connection may wait (the server away or every connection busy) before the call fails. */
export const CONNECT_TIMEOUT_MS = 3_000;
/**
 * How long a statement's answer may take before the call fails and its connection is dropped: a
 * server cut off without a reset (packets dropped) would otherwise hold the call until TCP gives up.
 */
export const QUERY_TIMEOUT_MS = 6_000;
/**
 * Session settings of every connection: a statement waits at most `lock_timeout` for a lock, and
 * a transaction left idle (its process frozen or cut off between two statements) is ended by the
 * server after `idle_in_transaction_session_timeout`, releasing the rows it locked: no frozen
 * process stalls the others past these bounds.
 */
export const LOCK_TIMEOUT_MS = 5_000;
export const IDLE_IN_TRANSACTION_MS = 3_000;

/**
 * A pool of the service's PostgreSQL connections. A connection that fails, idle in the pool or
 * taken out of it (a server stopped, a backend terminated), fails the call using it and is
 * dropped: never an unhandled 'error' event, which would end the process. Calls made while the
 * server is away fail within {@link CONNECT_TIMEOUT_MS}, and a statement unanswered (a network
 * cut) within {@link QUERY_TIMEOUT_MS}; once the server is back, new connections serve.
 */
export function servicePool(url: string, max: number, more: Omit<PoolConfig, 'connectionString' | 'max'> = {}): Pool {
  const pool = new Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    lock_timeout: LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    ...more,
  });
  // An idle connection lost: the pool drops it.
  pool.on('error', () => undefined);
  // A connection taken out of the pool has no listener of the pool's: its failure reaches the query under way.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * A connection of its own, outside the pools (a LISTEN session): it fails within the same bounds as
 * the pools' connections (connecting, a statement unanswered) and keeps its socket alive, so that a
 * link cut without a reset ends in an 'error' instead of a session that silently hears nothing.
 */
export function sessionClient(url: string): Client {
  return new Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
}
