import { createServer, Server, Socket } from 'node:net';
import type { Server as HttpsServer } from 'node:https';
import { errorBody } from './error-body';

const TLS_HANDSHAKE = 0x16;

const refusal = (() => {
  const body = JSON.stringify(errorBody('https_required', 'plain HTTP is refused: call this service over HTTPS'));
  return [
    'HTTP/1.1 403 Forbidden',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
})();

/**
 * Listens on one port for both: a connection whose first byte opens a TLS handshake goes to the
 * HTTPS server; anything else is answered, in plain HTTP, with the error body that refuses it.
 * (Fastify's TLS server alone would just drop a plain request without a word.)
 */
export interface HttpsFront {
  server: Server;
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then drops what is left. */
  close(graceMs?: number): Promise<void>;
}

export interface HttpsFrontOptions {
  /** A connection that sends nothing for this long is closed (default 10 s). */
  firstByteTimeoutMs?: number;
}

export function listenHttpsOnly(https: HttpsServer, port: number, host: string, options: HttpsFrontOptions = {}): Promise<HttpsFront> {
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? 10_000;
  // Node's HTTP server enforces `headersTimeout` and `requestTimeout`, and keeps the list of
  // connections `closeIdleConnections` reads, only once it has said 'listening'. This one never
  // listens (the front hands it its sockets), so it is told here: without it a request whose
  // headers never end held its socket for good, and its 408 was never sent.
  if (https.listenerCount('listening') > 0) https.emit('listening');
  const sockets = new Set<Socket>();
  const front = createServer((socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    // Nothing at all (not even a TLS hello) for a while: closed, before any server owns it.
    socket.setTimeout(firstByteTimeoutMs, () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) {
        https.emit('connection', socket);
        process.nextTick(() => socket.resume());
      } else {
        socket.end(refusal);
      }
    });
  });
  const close = async (graceMs = 2000) => {
    const closed = new Promise((resolve) => front.close(resolve));
    https.closeIdleConnections();
    const deadline = Date.now() + graceMs;
    while (sockets.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      https.closeIdleConnections();
    }
    for (const socket of sockets) socket.destroy();
    // Stops the HTTPS server's connection checks (it never listened: the error is expected).
    https.close(() => undefined);
    await closed;
  };
  return new Promise((resolve, reject) => {
    front.once('error', reject);
    front.listen(port, host, () => resolve({ server: front, close }));
  });
}
