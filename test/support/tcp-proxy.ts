import { AddressInfo, createServer, Server, Socket } from 'node:net';

/**
 * A TCP proxy in a test, between the service and a server: forwards both ways, with a latency
 * added to every chunk (`delayMs`), or holds everything back (`blackhole`: packets dropped, as a
 * network cut without resets), or cuts every connection (`cut`).
 */
export class TcpProxy {
  delayMs = 0;
  private holding = false;
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
      this.pipe(client, upstream);
      this.pipe(upstream, client);
      upstream.connect(this.target.port, this.target.host);
    };
    if (this.holding) this.held.push(start);
    else start();
  }

  /** Forwards `from` to `to`, each chunk after the latency, and none while held (in order). */
  private pipe(from: Socket, to: Socket): void {
    let chain = Promise.resolve();
    from.on('data', (chunk) => {
      chain = chain.then(async () => {
        if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
        if (this.holding) await new Promise<void>((resolve) => this.held.push(resolve));
        if (!to.destroyed) to.write(chunk);
      });
    });
  }
}
