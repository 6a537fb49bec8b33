import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { errorBody } from './error-body';

/** What Node's HTTP parser refuses before any route runs, and its status. */
function classify(code: string | undefined): { status: number; text: string; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, text: 'Request Timeout', message: 'the request was not received in time' };
  if (code === 'HPE_HEADER_OVERFLOW')
    return { status: 431, text: 'Request Header Fields Too Large', message: 'the request headers are too large' };
  return {
    status: 400,
    text: 'Bad Request',
    message: 'the request is not valid HTTP (a header with a control character, a malformed line)',
  };
}

/**
 * Fastify's `clientErrorHandler`: the answer to a request Node's parser refuses (oversized headers,
 * a control character in a header, a timeout) in the error body, as every other error, instead of
 * Fastify's own `{error, message, statusCode}`. It echoes nothing of the request. A reset or
 * destroyed connection gets nothing; the socket is closed after the answer.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A request sent before the bad one on this connection (pipelined) is still being answered:
  // its answer goes first and the connection closes after it; the bad request gets none. Writing
  // ours now would cut that answer off, although its request ran.
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A request whose body did not come in time has its own response waiting on the socket (its
  // route started with its headers): the 408 is that response. Before, it was taken for an earlier
  // pipelined request's answer, and the client got nothing until the socket was dropped.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && pending && !pending.headersSent && pending.req && !pending.req.complete) {
    const { status, message } = classify(error.code);
    pending.shouldKeepAlive = false;
    answerThrough(pending, status, message);
    setTimeout(() => socket.destroy(), 5_000).unref();
    return;
  }
  if (pending && !pending.writableFinished) {
    pending.shouldKeepAlive = false;
    pending.once('close', () => socket.end());
    setTimeout(() => socket.destroy(), 30_000).unref();
    return;
  }
  const { status, text, message } = classify(error.code);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Ended, not destroyed at once: on TLS a write followed by destroy() is lost before it is sent.
  socket.end(rawAnswer(status, text, message));
  // A peer that never reads must not keep the socket.
  setTimeout(() => socket.destroy(), 5_000).unref();
}

/** Answers through a response no route will write, in the error body, and closes the connection after it. */
function answerThrough(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify(errorBody('bad_request', message));
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

/** A whole HTTP/1.1 answer in the error body, for a socket no route will answer. */
function rawAnswer(status: number, text: string, message: string): string {
  const body = JSON.stringify(errorBody('bad_request', message));
  return `HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Requests Node answers itself, before any route or hook, with an empty body: an `Expect` other
 * than `100-continue` (417) and `CONNECT` (Node closes the connection without a word when nothing
 * listens). Here they get the error body, echoing nothing of the request. (A request without `Host`
 * is refused by {@link refuseRequestsWithoutHost}, once Node's own check is turned off.)
 */
export function answerUnservedRequests(server: Server): void {
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    answerThrough(response, 417, 'the only expectation served is "Expect: 100-continue"');
  });
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer(400, 'Bad Request', 'CONNECT is not served: this service is not a proxy'));
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

/**
 * HTTP/1.1 requires a `Host` header. Node refuses a request without one with an empty 400 unless
 * `requireHostHeader` is off; with it off, this hook refuses it in the error body, before
 * authentication (it runs first among the `onRequest` hooks).
 */
export function refuseRequestsWithoutHost(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      void reply.header('connection', 'close');
      await reply.status(400).send(errorBody('bad_request', 'an HTTP/1.1 request must carry a Host header'));
    }
  });
}
