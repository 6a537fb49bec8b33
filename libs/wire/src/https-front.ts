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
export function listenHttpsOnly(https: HttpsServer, port: number, host: string): Promise<Server> {
  const front = createServer((socket: Socket) => {
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
  front.on('close', () => https.close());
  return new Promise((resolve, reject) => {
    front.once('error', reject);
    front.listen(port, host, () => resolve(front));
  });
}
