import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { AddressInfo, connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { generate } from 'selfsigned';
import { answerClientError } from './client-errors';
import { HttpsFront, listenHttpsOnly } from './https-front';

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
    front = await listenHttpsOnly(https, 0, '127.0.0.1', { firstByteTimeoutMs: 200 });
    port = (front.server.address() as AddressInfo).port;
  });
  afterAll(() => front.close(100));

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

  it("answers 408 in part 7's body to a request whose headers never end, and closes it", async () => {
    const { answer, ms } = await sendOverTls('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n');
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      status: 'error',
      error_type: 'bad_request',
      error_msg: 'the request was not received in time',
    });
    expect(ms).toBeLessThan(5_000);
  });

  it("answers 408 in part 7's body to a request whose body never ends, and closes it", async () => {
    const { answer, ms } = await sendOverTls(
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em',
    );
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      status: 'error',
      error_type: 'bad_request',
      error_msg: 'the request was not received in time',
    });
    expect(ms).toBeLessThan(5_000);
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
    expect(ms).toBeLessThan(5_000);
  });
});
