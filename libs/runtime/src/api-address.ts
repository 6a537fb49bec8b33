import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '@deals/adapters';
import { writeWhole } from './shared-folder';

/** Where the API serving a data folder answers, as it recorded on starting (`DATA_DIR/api-address.json`). */
export interface ApiAddress {
  pid: number;
  /** Where a process on this machine reaches it (`https://127.0.0.1:<port>`; `http://` behind a TLS proxy). */
  localUrl: string;
  /** The address it gives in its links (`PUBLIC_BASE_URL`, or `https://localhost:<its port>`). */
  publicBaseUrl: string;
  /** It serves plain HTTP behind a TLS-terminating proxy (requests must say `X-Forwarded-Proto: https`). */
  behindTlsProxy: boolean;
}

const FILE = 'api-address.json';

/**
 * Records where this process serves the data folder, so that the operator's commands find it
 * whatever their own `PORT`. Returns what removes the record (only while it is still this process's).
 */
export function recordApiAddress(dataDir: string, address: Omit<ApiAddress, 'pid'>): () => void {
  const file = join(dataDir, FILE);
  writeWhole(file, `${JSON.stringify({ pid: process.pid, ...address }, null, 2)}\n`);
  return () => {
    if (readApiAddress(dataDir)?.pid === process.pid) rmSync(file, { force: true });
  };
}

/** The API that serves the data folder now, by its record: null when none was recorded or its process is gone. */
export function runningApiAddress(dataDir: string): ApiAddress | null {
  const address = readApiAddress(dataDir);
  return address && processAlive(address.pid) ? address : null;
}

function readApiAddress(dataDir: string): ApiAddress | null {
  try {
    const read = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as ApiAddress;
    return Number.isSafeInteger(read.pid) && typeof read.localUrl === 'string' && typeof read.publicBaseUrl === 'string' ? read : null;
  } catch {
    return null;
  }
}

/** Where a process on this machine reaches an API listening on `host`:`port` (any address: the loopback one). */
export function localApiUrl(config: { host: string; behindTlsProxy: boolean }, port: number): string {
  const host =
    config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `${config.behindTlsProxy ? 'http' : 'https'}://${host}:${port}`;
}

/** Whether `PUBLIC_BASE_URL` was left to its default (`https://localhost:<PORT>`). */
export function defaultPublicBaseUrl(config: { port: number; publicBaseUrl: string }): boolean {
  return config.publicBaseUrl === `https://localhost:${config.port}`;
}

/**
 * The address the service's links should name: `PUBLIC_BASE_URL` when this process was given one,
 * else the one the API serving the data folder recorded, else the default for this process's `PORT`
 * (`guessed`: no API runs there to say).
 */
export function linkBaseUrl(config: { dataDir: string; port: number; publicBaseUrl: string }): { url: string; guessed: boolean } {
  if (!defaultPublicBaseUrl(config)) return { url: config.publicBaseUrl, guessed: false };
  const running = runningApiAddress(config.dataDir);
  return running ? { url: running.publicBaseUrl, guessed: false } : { url: config.publicBaseUrl, guessed: true };
}
