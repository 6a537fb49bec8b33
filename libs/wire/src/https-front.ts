import { createServer, Server, Socket } from 'node:net';
import type { Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
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
  /**
   * Stops accepting, lets requests in flight finish (up to `graceMs`; those whose client left too,
   * given `requestsInFlight`), then drops what is left.
   */
  close(graceMs?: number): Promise<void>;
}

export interface HttpsFrontOptions {
  /** A connection whose TLS handshake is not done this long after it opened (one that sends nothing included) is closed (default 10 s). */
  handshakeTimeoutMs?: number;
  /** How long a refused plain-HTTP connection may stay open once answered, for its client to read the answer and close (default 2 s). */
  refusalLingerMs?: number;
  /** Connections past this many at once are closed as soon as they are accepted (default: no cap). */
  maxConnections?: number;
  /**
   * The requests being worked on, whether or not their client still waits: a stop waits for them
   * too (within its grace), since a request whose client left holds no connection.
   */
  requestsInFlight?: { readonly size: number };
}

/** Where a connection stands: before its first byte, refused (plain HTTP), in its TLS handshake, or secure. */
type Stage = 'first-byte' | 'refused' | 'handshake' | 'secure';

export function listenHttpsOnly(https: HttpsServer, port: number, host: string, options: HttpsFrontOptions = {}): Promise<HttpsFront> {
  const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 10_000;
  const refusalLingerMs = options.refusalLingerMs ?? 2_000;
  // Node's HTTP server enforces `headersTimeout` and `requestTimeout`, and keeps the list of
  // connections `closeIdleConnections` reads, only once it has said 'listening'. This one never
  // listens (the front hands it its sockets), so it is told here: without it a request whose
  // headers never end held its socket for good, and its 408 was never sent.
  if (https.listenerCount('listening') > 0) https.emit('listening');
  const sockets = new Map<Socket, Stage>();
  const deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  // The TLS server wraps each socket it is handed in a TLSSocket of its own; both share one TCP
  // handle, so the peer's address and port tell which of the front's sockets became secure.
  const handshaking = new Map<string, Socket>();
  const peer = (socket: Socket | TLSSocket) => `${socket.remoteAddress}|${socket.remotePort}`;
  const onSecure = (tls: TLSSocket) => {
    const key = peer(tls);
    const socket = handshaking.get(key);
    if (socket === undefined) return;
    handshaking.delete(key);
    sockets.set(socket, 'secure');
    clearTimeout(deadlines.get(socket));
  };
  https.on('secureConnection', onSecure);
  const front = createServer((socket: Socket) => {
    sockets.set(socket, 'first-byte');
    const key = peer(socket);
    // One deadline from the start, not an idle timer: trickling a handshake a byte at a time does
    // not extend it.
    const deadline = setTimeout(() => socket.destroy(), handshakeTimeoutMs);
    deadlines.set(socket, deadline);
    socket.on('close', () => {
      clearTimeout(deadline);
      sockets.delete(socket);
      if (handshaking.get(key) === socket) handshaking.delete(key);
    });
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      if (first[0] === TLS_HANDSHAKE) {
        sockets.set(socket, 'handshake');
        handshaking.set(key, socket);
        socket.pause();
        socket.unshift(first);
        https.emit('connection', socket);
        process.nextTick(() => socket.resume());
      } else {
        refuse(socket);
      }
    });
  });
  if (options.maxConnections !== undefined) front.maxConnections = options.maxConnections;

  /**
   * Answers 403 and closes. The rest of the request is read and dropped, so that the client's
   * close is seen (the socket then closes by itself) and closing never finds unread input, which
   * would reset the connection before the client had read the answer. A client that stays is
   * dropped after the linger.
   */
  const refuse = (socket: Socket) => {
    sockets.set(socket, 'refused');
    clearTimeout(deadlines.get(socket));
    socket.on('data', () => undefined);
    socket.resume();
    socket.end(refusal);
    const linger = setTimeout(() => socket.destroy(), refusalLingerMs);
    socket.once('close', () => clearTimeout(linger));
  };

  const close = async (graceMs = 2000) => {
    const closed = new Promise((resolve) => front.close(resolve));
    // Only secure connections can hold a request in flight; every other one goes now.
    const dropUnserved = () => {
      for (const [socket, stage] of sockets) if (stage !== 'secure') socket.destroy();
    };
    dropUnserved();
    https.closeIdleConnections();
    const deadline = Date.now() + graceMs;
    const working = () => sockets.size > 0 || (options.requestsInFlight?.size ?? 0) > 0;
    while (working() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      dropUnserved();
      https.closeIdleConnections();
    }
    for (const socket of sockets.keys()) socket.destroy();
    https.off('secureConnection', onSecure);
    // Stops the HTTPS server's connection checks (it never listened: the error is expected).
    https.close(() => undefined);
    await closed;
  };
  return new Promise((resolve, reject) => {
    front.once('error', reject);
    front.listen(port, host, () => resolve({ server: front, close }));
  });
}
