import { createSecureContext } from 'node:tls';
import { Dispatcher, Pool } from 'undici';

/**
 * An undici dispatcher for the service under test over HTTPS, its self-signed certificate not
 * verified: one pool of kept-alive connections per origin, with one TLS context for all of them.
 *
 * undici's Agent is not used: it closes an origin's pool when one of that pool's connections closes
 * while it counts none left, and the closing pool's own disconnects then close the next one, so
 * after one `Connection: close` answer every later request opened a fresh TLS connection
 * (nodejs/undici#5022). Here a pool lives until `close()`; a connection the server closes is
 * replaced inside it.
 */
export class InsecureHttps extends Dispatcher {
  private readonly pools = new Map<string, Pool>();
  private readonly options: Pool.Options;

  constructor(options: Omit<Pool.Options, 'connect'> = {}) {
    super();
    this.options = { ...options, connect: { rejectUnauthorized: false, secureContext: createSecureContext() } };
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(options.origin);
    let pool = this.pools.get(origin);
    if (!pool || pool.closed || pool.destroyed) {
      pool = new Pool(origin, this.options);
      this.pools.set(origin, pool);
    }
    return pool.dispatch(options, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all([...this.pools.values()].map((pool) => pool.close())).then(() => this.pools.clear());
    if (!callback) return closed;
    void closed.then(callback);
  }

  override destroy(): Promise<void>;
  override destroy(error: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(error: Error | null, callback: () => void): void;
  override destroy(errorOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const error = typeof errorOrCallback === 'function' ? null : (errorOrCallback ?? null);
    const done = typeof errorOrCallback === 'function' ? errorOrCallback : callback;
    const destroyed = Promise.all([...this.pools.values()].map((pool) => pool.destroy(error))).then(() => this.pools.clear());
    if (!done) return destroyed;
    void destroyed.then(done);
  }
}

/**
 * The dispatcher shared by the test helpers that call the service. At most 64 connections an
 * origin: a test that sends hundreds of requests at once still races them in the service, queued
 * on the connections it has, instead of opening hundreds of TLS connections at once, whose
 * handshakes on a busy machine outlasted undici's connect timeout.
 */
export const insecureHttps = new InsecureHttps({ connections: 64 });
