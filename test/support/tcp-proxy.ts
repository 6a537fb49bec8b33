import { AddressInfo, createServer, Server, Socket } from 'node:net';

/** Where a cut falls about the chunk it waits for (see {@link TcpProxy.cutAt}). */
type CutPoint = 'before' | 'sent' | 'answered';

/**
 * A TCP proxy in a test, between the service and a server: forwards both ways, with a latency
 * added to every chunk (`delayMs`), or holds everything back (`blackhole`: packets dropped, as a
 * network cut without resets), or cuts every connection (`cut`), at once or at a given chunk (`cutAt`).
 */
export class TcpProxy {
  delayMs = 0;
  private holding = false;
  /** The cut waiting for its chunk, and, once that was sent, the connection whose answer it waits for. */
  private trap: { matches: (chunk: Buffer) => boolean; at: CutPoint; cut: () => void; answerTo?: Socket } | null = null;
  private readonly pairs = new Set<[Socket, Socket]>();
  private readonly held: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server, target);
    server.on('connection', (socket) => proxy.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** While on, nothing is forwarded (and no connection is made); off, what was held goes on in order. */
  blackhole(on: boolean): void {
    this.holding = on;
    if (!on) for (const release of this.held.splice(0)) release();
  }

  /**
   * Cuts every connection once a chunk on its way to the server `matches` (a statement): `before`
   * it reaches the server (dropped), once it is `sent` to it, or in place of the server's next chunk
   * on that connection (`answered`: the statement ran, its answer is lost). Resolves once it has cut.
   */
  cutAt(matches: (chunk: Buffer) => boolean, at: CutPoint): Promise<void> {
    return new Promise((cut) => (this.trap = { matches, at, cut }));
  }

  /** Closes every connection open now, as a reset. */
  cut(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  close(): Promise<void> {
    this.cut();
    this.blackhole(false);
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const start = () => {
      const upstream = new Socket();
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      const end = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      this.pipe(client, upstream, true);
      this.pipe(upstream, client, false);
      upstream.connect(this.target.port, this.target.host);
    };
    if (this.holding) this.held.push(start);
    else start();
  }

  /** Forwards `from` to `to`, each chunk after the latency, and none while held (in order); cuts where {@link cutAt} says. */
  private pipe(from: Socket, to: Socket, toServer: boolean): void {
    let chain = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      chain = chain.then(async () => {
        if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
        if (this.holding) await new Promise<void>((resolve) => this.held.push(resolve));
        if (to.destroyed) return;
        const trap = this.trap;
        if (trap && !trap.answerTo && toServer && trap.matches(chunk)) {
          if (trap.at === 'before') return this.sprung();
          if (trap.at === 'sent') return void to.write(chunk, () => this.sprung());
          trap.answerTo = from;
        } else if (trap?.answerTo === to && !toServer) return this.sprung();
        to.write(chunk);
      });
    });
  }

  /** The waiting cut made: every connection closed, and its promise resolved. */
  private sprung(): void {
    const { cut } = this.trap!;
    this.trap = null;
    this.cut();
    cut();
  }
}
