import { request } from 'node:https';

export interface PiecewiseAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Posts `body` on a fresh HTTPS connection as a slow link uploads it: a piece at a time, the next
 * written once the last has left for the socket. A server that answers and closes before the body
 * is in meets the client still sending, which then sees ECONNRESET or EPIPE (or its connection
 * closed under it): that rejects, whatever was answered before it.
 */
export function postInPieces(url: string, headers: Record<string, string>, body: Buffer, piece = 16 * 1024): Promise<PiecewiseAnswer> {
  return new Promise((resolve, reject) => {
    let failed: Error | null = null;
    let answer: PiecewiseAnswer | null = null;
    let sent = false;
    const settle = () => {
      if (failed) reject(failed);
      else if (answer && sent) resolve(answer);
    };
    const req = request(url, {
      method: 'POST',
      agent: false,
      rejectUnauthorized: false,
      headers: { ...headers, 'content-length': String(body.length) },
    });
    req.on('error', (error) => {
      failed ??= error;
      settle();
    });
    // A connection closed before the body was all sent fails the post too, whatever was answered.
    req.on('close', () => {
      if (!sent) failed ??= new Error('the connection closed before the body was sent');
      settle();
    });
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        answer = { status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') };
        settle();
      });
      response.on('error', (error) => {
        failed ??= error;
        settle();
      });
    });
    const writeFrom = (offset: number) => {
      if (failed) return;
      if (offset >= body.length) {
        req.end(() => {
          sent = true;
          settle();
        });
        return;
      }
      req.write(body.subarray(offset, offset + piece), (error) => {
        if (error) {
          failed ??= error;
          settle();
        } else writeFrom(offset + piece);
      });
    };
    writeFrom(0);
  });
}
