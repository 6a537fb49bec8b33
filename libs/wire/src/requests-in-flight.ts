import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** One request being worked on: ended once its answer is written and its response closed. */
interface Entry {
  answered: boolean;
  closed: boolean;
}

const ENTRY = Symbol('request in flight');
type TrackedRequest = FastifyRequest & { [ENTRY]?: Entry };

/**
 * The requests the service is working on, from their arrival until their answer is written and
 * their response closed. A client that closes its connection does not stop its request: the
 * handler runs to its end (a purchase charges, sells and records), and a stop must wait for it as
 * for a request whose client waits. The connections alone do not tell it: the client's is gone.
 */
export class RequestsInFlight {
  private working = 0;
  private gone = 0;
  private readonly waiting = new Set<() => void>();

  /** Requests being worked on. */
  get size(): number {
    return this.working;
  }

  /** Of those, the ones whose client closed its connection before the answer. */
  get clientGone(): number {
    return this.gone;
  }

  /** Resolves once no request is in flight (true), or after `timeoutMs` (false: some still are). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.working === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve(drained);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.waiting.add(wake);
    });
  }

  begin(): Entry {
    this.working++;
    return { answered: false, closed: false };
  }

  answered(entry: Entry): void {
    if (entry.answered) return;
    entry.answered = true;
    if (!entry.closed) return;
    this.gone--;
    this.end();
  }

  closed(entry: Entry): void {
    if (entry.closed) return;
    entry.closed = true;
    if (entry.answered) this.end();
    else this.gone++;
  }

  private end(): void {
    this.working--;
    if (this.working === 0) for (const wake of [...this.waiting]) wake();
  }
}

/**
 * Counts every request from its arrival (`onRequest`) until both its answer is written (`onSend`:
 * the handler, and every hook before the answer, ended) and its response closed (sent, or its
 * client gone). Registered before any other `onSend` hook, so that it runs for every answer.
 */
export function trackRequestsInFlight(fastify: FastifyInstance): RequestsInFlight {
  const inFlight = new RequestsInFlight();
  fastify.addHook('onRequest', (request: TrackedRequest, reply: FastifyReply, done: () => void) => {
    const entry = inFlight.begin();
    request[ENTRY] = entry;
    reply.raw.once('close', () => inFlight.closed(entry));
    done();
  });
  fastify.addHook(
    'onSend',
    (request: TrackedRequest, _reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const entry = request[ENTRY];
      if (entry) inFlight.answered(entry);
      done(null, payload);
    },
  );
  return inFlight;
}
