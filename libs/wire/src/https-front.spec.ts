import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { AddressInfo, connect as netConnect, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { generate } from 'selfsigned';
import { answerClientError } from './client-errors';
import { HttpsFront, listenHttpsOnly } from './https-front';

/**
 * How long a wait may take before it counts as hung: far past every timer these tests set (300 ms
 * here), far short of those that would otherwise end a connection (60 s, or the TLS server's own
 * 120 s), and under the test's own timeout.
 */
const HUNG_MS = 20_000;

/**
 * The front hands sockets to an HTTPS server that never listens itself: Node's request timeouts
 * must still hold, and a connection that says nothing must not be kept.
 */
describe('the HTTPS front', () => {
  let https: HttpsServer;
  let front: HttpsFront;
  let port: number;
  beforeAll(async () => {
    const made = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256' } as never);
    https = createHttpsServer(
      { key: made.private, cert: made.cert, headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 },
      (req, res) => {
        if (req.url === '/slow') setTimeout(() => res.end('slow ok'), 50);
        // Answers once the whole body has come, as a route that parses it does.
        else if (req.url === '/upload') req.on('data', () => undefined).on('end', () => res.end('uploaded'));
        else res.end('ok');
      },
    );
    https.on('clientError', answerClientError);
    front = await listenHttpsOnly(https, 0, '127.0.0.1', { handshakeTimeoutMs: 300, refusalLingerMs: 300 });
    port = (front.server.address() as AddressInfo).port;
  });
  afterAll(() => front.close(100));

  /** Resolves once the front holds no connection (the server's own count, as the kernel's files go). */
  const frontEmpty = async (server = front.server, withinMs = HUNG_MS) => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const open = await new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
      if (open === 0) return;
      if (Date.now() > deadline) throw new Error(`${open} connections still open`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** The raw connections of the test: their side is closed after it (the server's FIN leaves them half open). */
  const rawSockets = new Set<Socket>();
  afterEach(() => {
    for (const socket of rawSockets) socket.destroy();
    rawSockets.clear();
  });

  /**
   * A raw TCP connection that sends `bytes` and never closes its own side during the test: what it
   * read, how long until the server ended the connection, and whether it was reset. `onAnswer`
   * hears each chunk read.
   */
  const sendRaw = (bytes: Buffer | string, target = port, onAnswer: () => void = () => undefined) =>
    new Promise<{ answer: string; ms: number; reset: boolean }>((resolve) => {
      const started = Date.now();
      const socket = netConnect({ host: '127.0.0.1', port: target, allowHalfOpen: true }, () => socket.write(bytes));
      rawSockets.add(socket);
      let answer = '';
      let reset = false;
      const ended = () => resolve({ answer, ms: Date.now() - started, reset });
      socket.setEncoding('latin1');
      socket.on('data', (chunk) => {
        answer += chunk;
        onAnswer();
      });
      socket.on('error', () => (reset = true));
      socket.on('end', ended);
      socket.on('close', ended);
    });

  /** Sends `text` over TLS and reads until the server closes; the answer and how long it took. */
  const sendOverTls = (text: string) =>
    new Promise<{ answer: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => socket.write(text));
      let answer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('close', () => resolve({ answer, ms: Date.now() - started }));
      socket.on('error', reject);
    });

  it('serves a whole request', async () => {
    const { answer } = await sendOverTls('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*ok$/);
  });

  it('answers 408 in the error body to a request whose headers never end, and closes it', async () => {
    const { answer, ms } = await sendOverTls('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n');
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      status: 'error',
      error_type: 'bad_request',
      error_msg: 'the request was not received in time',
    });
    expect(ms).toBeLessThan(HUNG_MS);
  });

  it('answers 408 in the error body to a request whose body never ends, and closes it', async () => {
    const { answer, ms } = await sendOverTls(
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em',
    );
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      status: 'error',
      error_type: 'bad_request',
      error_msg: 'the request was not received in time',
    });
    expect(ms).toBeLessThan(HUNG_MS);
  });

  it('still answers a request pipelined before a malformed one (it ran), then closes', async () => {
    const { answer } = await sendOverTls('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*slow ok$/);
  });

  it('closes a connection that sends nothing at all', async () => {
    const ms = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = netConnect(port, '127.0.0.1');
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', () => undefined);
    });
    expect(ms).toBeLessThan(HUNG_MS);
  });

  it('refuses plain HTTP with 403 and its body, and the connection is gone once the client closes', async () => {
    // A linger past the ceiling: only the client's close can end the connection in time.
    const lingering = await listenHttpsOnly(https, 0, '127.0.0.1', { handshakeTimeoutMs: 60_000, refusalLingerMs: 60_000 });
    const lingeringPort = (lingering.server.address() as AddressInfo).port;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = netConnect(lingeringPort, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text)); // the server's FIN after its answer; this side then closes
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error_type: 'https_required' });
    try {
      await frontEmpty(lingering.server);
    } finally {
      await lingering.close(100);
    }
  });

  it('drops a refused client that never closes its side after the linger, its answer read whole', async () => {
    const { answer, reset } = await sendRaw('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden[\s\S]*https_required/);
    expect(reset).toBe(false);
    const started = Date.now();
    await frontEmpty();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('closes a connection whose TLS handshake starts and never finishes', async () => {
    const { ms } = await sendRaw(Buffer.from([0x16, 0x03, 0x01]));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(HUNG_MS);
    await frontEmpty();
  });

  it('keeps a secure connection past the handshake deadline, for its next request', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    let answer = '';
    socket.setEncoding('latin1').on('data', (chunk) => (answer += chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    // A connection opened after this one and silent: once its deadline has closed it, this one's
    // (as long, and set earlier) has passed too.
    const { ms } = await sendRaw(Buffer.alloc(0));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(socket.destroyed).toBe(false);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await closed;
    expect(answer.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
  });

  it('closes connections past maxConnections at once, counting those the HTTPS server holds, and serves again once they are gone', async () => {
    // A handshake deadline past the ceiling: only the cap can close a connection in time.
    const capped = await listenHttpsOnly(https, 0, '127.0.0.1', { maxConnections: 2, handshakeTimeoutMs: 60_000 });
    const cappedPort = (capped.server.address() as AddressInfo).port;
    try {
      const held = await Promise.all(
        [0, 1].map(async () => {
          const socket = tlsConnect({ host: '127.0.0.1', port: cappedPort, rejectUnauthorized: false });
          await new Promise((resolve) => socket.once('secureConnect', resolve));
          return socket;
        }),
      );
      const started = Date.now();
      const refused = await new Promise<string>((resolve) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: cappedPort, rejectUnauthorized: false });
        socket.once('secureConnect', () => resolve('served'));
        socket.on('error', () => resolve('closed'));
        socket.on('close', () => resolve('closed'));
      });
      expect(refused).toBe('closed');
      expect(Date.now() - started).toBeLessThan(HUNG_MS);
      for (const socket of held) socket.destroy();
      await frontEmpty(capped.server);
      const again = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: cappedPort, rejectUnauthorized: false }, () =>
          socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        );
        let text = '';
        socket.setEncoding('latin1').on('data', (chunk) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(again).toMatch(/^HTTP\/1\.1 200 OK/);
    } finally {
      await capped.close(100);
    }
  });

  it('stops at once while a refused client and a half-done handshake are still open', async () => {
    const other = await listenHttpsOnly(https, 0, '127.0.0.1', { handshakeTimeoutMs: 60_000, refusalLingerMs: 60_000 });
    const otherPort = (other.server.address() as AddressInfo).port;
    // Open once the refused client has its answer and the half-done handshake is the HTTPS server's.
    const handed = new Promise((resolve) => https.once('connection', resolve));
    let answered!: () => void;
    const heard = new Promise<void>((resolve) => (answered = resolve));
    const refused = sendRaw('GET / HTTP/1.1\r\nHost: x\r\n\r\n', otherPort, () => answered());
    const half = sendRaw(Buffer.from([0x16, 0x03, 0x01]), otherPort);
    await Promise.all([heard, handed]);
    // A grace past the ceiling: waiting on either connection would outlast it.
    const started = Date.now();
    await other.close(60_000);
    expect(Date.now() - started).toBeLessThan(HUNG_MS);
    expect((await refused).answer).toMatch(/^HTTP\/1\.1 403/);
    await half;
  });
});
