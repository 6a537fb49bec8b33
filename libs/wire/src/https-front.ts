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

export function listenHttpsOnly(https: HttpsServer, port: number, host: string): Promise<HttpsFront> {
  const sockets = new Set<Socket>();
  const front = createServer((socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
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
    await closed;
  };
  return new Promise((resolve, reject) => {
    front.once('error', reject);
    front.listen(port, host, () => resolve({ server: front, close }));
  });
}
