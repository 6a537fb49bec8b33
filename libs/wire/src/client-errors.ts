import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from './error-body';

/** What Node's HTTP parser refuses before any route runs, and its status. */
function classify(code: string | undefined): { status: number; text: string; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, text: 'Request Timeout', message: 'the request was not received in time' };
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, text: 'Request Header Fields Too Large', message: 'the request headers are too large' };
  return { status: 400, text: 'Bad Request', message: 'the request is not valid HTTP (a header with a control character, a malformed line)' };
}

/**
 * Fastify's `clientErrorHandler`: the answer to a request Node's parser refuses (oversized headers,
 * a control character in a header, a timeout) in part 7's body, as every other error, instead of
 * Fastify's own `{error, message, statusCode}`. It echoes nothing of the request. A reset or
 * destroyed connection gets nothing; the socket is closed after the answer.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A request sent before the bad one on this connection (pipelined) is still being answered:
  // its answer goes first and the connection closes after it; the bad request gets none. Writing
  // ours now would cut that answer off, although its request ran.
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (pending && !pending.writableFinished) {
    pending.shouldKeepAlive = false;
    pending.once('close', () => socket.end());
    setTimeout(() => socket.destroy(), 30_000).unref();
    return;
  }
  const { status, text, message } = classify(error.code);
  const body = JSON.stringify(errorBody('bad_request', message));
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Ended, not destroyed at once: on TLS a write followed by destroy() is lost before it is sent.
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  // A peer that never reads must not keep the socket.
  setTimeout(() => socket.destroy(), 5_000).unref();
}
