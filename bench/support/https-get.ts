/** Single HTTPS calls (a GET, a JSON POST) for fetching reference bodies and checking calls before a bench (not for load). */
import { Agent, request } from 'node:https';

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One GET over HTTPS that trusts exactly `ca` (the service's self-signed certificate). */
export function httpsGet(url: string, ca: string, headers: Record<string, string> = {}): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** One POST (or `method`) of a JSON body (or its bytes) over HTTPS that trusts exactly `ca` (for checking a call once before a bench, not for load). */
export function httpsPostJson(
  url: string,
  ca: string,
  body: unknown,
  headers: Record<string, string> = {},
  agent: Agent | false = false,
  method: 'POST' | 'PUT' = 'POST',
): Promise<HttpsAnswer> {
  // A Buffer is sent as it is (encoded beforehand: a large body's encoding then falls outside what is timed).
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, ca, agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
