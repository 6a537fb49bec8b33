import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import { execFile } from 'node:child_process';
import { CreatePartner, CreatedPartner, PartnerRole } from '@deals/accounts';
import { Clock, ManualClock, OPERATOR, SequentialIdGenerator } from '@deals/kernel';
import { CatalogueImport, DealImportRecord, loadServiceConfig, ProjectionHost } from '@deals/runtime';
import type { RegionTerms } from '@deals/catalog';
import { CommandBus } from '@nestjs/cqrs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { insecureHttps } from './insecure-https';
import { RunningApi, startApi } from '../../apps/api/src/bootstrap';
import { tempDir } from './temp-dir';
import { UNLIMITED } from './unlimited';
import { describeApi } from '../../apps/api/src/api-description';
import { ResponseCheck } from './response-check';
import { compiledEntry } from './compiled-service';

const ROOT = join(__dirname, '..', '..');

export interface CallOptions {
  apiKey?: string;
  basic?: { username: string; password: string };
  body?: unknown;
  /** A JSON body sent as this text (one `JSON.stringify` could not write: nested 20,000 deep). */
  jsonText?: string;
  headers?: Record<string, string>;
  /**
   * Why the answer's body is left out of the description (a deprecated form answering another
   * operation's body): its status and media type are checked, not its body.
   */
  undescribedBody?: string;
}

export interface Reply<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

export interface TestApiOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a data folder (a restart); otherwise a fresh temporary one. */
  dataDir?: string;
}

/**
 * The real application on the embedded default, in a temporary data folder, spoken to over HTTPS.
 * Each test makes its own partner and catalogue.
 */
export class TestApi {
  private check?: ResponseCheck;

  private constructor(
    private running: RunningApi,
    readonly dataDir: string,
    readonly clock: Clock,
    private readonly removeDir: () => void,
  ) {}

  static async start(options: TestApiOptions = {}): Promise<TestApi> {
    const dir = options.dataDir ? { path: options.dataDir, remove: () => undefined } : tempDir('e2e');
    const clock = options.clock ?? new ManualClock(new Date('2026-06-15T12:00:00Z'));
    const config = loadServiceConfig({
      DATA_DIR: dir.path,
      PORT: '0',
      HOST: '127.0.0.1',
      DEMO_DATA: 'off',
      LOG_LEVEL: 'silent',
      ...UNLIMITED,
      ...options.env,
    });
    // nestjs-pino keeps the first app's logger, process-wide, for lines written outside a request:
    // a test's second app in this process would log through the first's (usually silent) one.
    __resetOutOfContextForTests();
    const running = await startApi({ config, clock, ids: options.dataDir ? undefined : new SequentialIdGenerator('t') });
    return new TestApi(running, dir.path, clock, dir.remove);
  }

  get port(): number {
    return this.running.port;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get servedRoutes(): RunningApi['routes'] {
    return this.running.routes;
  }

  /**
   * A call whose answer is read as text (a page, an image's bytes as text): its status and media
   * type checked against the description, and its body too when it is JSON.
   */
  async raw(
    method: string,
    path: string,
    options: { apiKey?: string } = {},
  ): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
    const url = new URL(path, this.url);
    if (options.apiKey !== undefined) url.searchParams.set('api_key', options.apiKey);
    const reply = await request(url, { method: method as never, dispatcher: insecureHttps });
    const text = await reply.body.text();
    const type = String(reply.headers['content-type'] ?? '');
    this.responses.check(
      method,
      url.pathname,
      reply.statusCode,
      type.startsWith('application/json') && text ? JSON.parse(text) : undefined,
      type,
    );
    return { status: reply.statusCode, text, headers: reply.headers };
  }

  get<T>(type: abstract new (...args: never[]) => T): T {
    return this.running.app.get(type as never) as T;
  }

  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
    const url = new URL(path, this.url);
    if (options.apiKey !== undefined) url.searchParams.set('api_key', options.apiKey);
    const headers: Record<string, string> = { ...options.headers };
    if (options.basic)
      headers.authorization = `Basic ${Buffer.from(`${options.basic.username}:${options.basic.password}`).toString('base64')}`;
    let body: string | undefined;
    if (options.body !== undefined || options.jsonText !== undefined) {
      body = options.jsonText ?? JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const reply = await request(url, { method: method as never, headers, body, dispatcher: insecureHttps });
    const text = await reply.body.text();
    const type = String(reply.headers['content-type'] ?? '');
    // An answer in another media type (a CSV) is its text.
    const json = text && (type.startsWith('application/json') || type === '');
    const parsed = json ? JSON.parse(text) : undefined;
    this.responses.check(method, url.pathname, reply.statusCode, options.undescribedBody ? undefined : parsed, type);
    return { status: reply.statusCode, headers: reply.headers, body: json ? parsed : (text as never) };
  }

  /** The checker of answers against the API description this application serves (made once). */
  get responses(): ResponseCheck {
    this.check ??= new ResponseCheck(describeApi(this.running.app, this.url));
    return this.check;
  }

  async createPartner(name = 'Test partner', role: PartnerRole = 'partner', requestsPerMinute?: number): Promise<CreatedPartner> {
    const partner = await this.get(CommandBus).execute(new CreatePartner(name, role, OPERATOR, requestsPerMinute));
    await this.settle();
    return partner;
  }

  async importRegions(regions: RegionTerms[]) {
    const report = await this.get(CatalogueImport).regions(regions, OPERATOR);
    await this.settle();
    return report;
  }

  async importDeals(deals: DealImportRecord[]) {
    const report = await this.get(CatalogueImport).deals(deals, OPERATOR);
    await this.settle();
    return report;
  }

  /** Waits until every view holds everything in the log. */
  settle(): Promise<void> {
    return this.get(ProjectionHost).waitForAll();
  }

  /** The requests the server is working on (those whose client went away included). */
  get requestsInFlight(): RunningApi['requestsInFlight'] {
    return this.running.requestsInFlight;
  }

  /**
   * Waits until the server works on no request, those whose client went away included (an
   * aborted request's handler runs to its end); false when some still run after `timeoutMs`.
   */
  requestsDone(timeoutMs = 60_000): Promise<boolean> {
    return this.running.requestsInFlight.drained(timeoutMs);
  }

  /** A graceful stop: the requests in flight are finished for up to `graceMs` (the front's default, 2 s, unless given). */
  async stop(graceMs?: number): Promise<void> {
    await this.running.close(graceMs);
  }

  async close(): Promise<void> {
    await this.stop();
    this.removeDir();
  }
}

/** Runs the operator CLI (its sources, compiled once: compiled-service.ts) as its own process on a data folder (`env` added to this process's). */
export async function runCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [compiledEntry('apps/cli/src/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env },
      timeout: timeoutMs,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number | null; killed?: boolean; signal?: string | null };
    // A run its timeout ended says so: not to be read as the command's own refusal.
    const killed = failed.killed ? `\n[runCli: ended by ${failed.signal} after its ${timeoutMs} ms timeout]` : '';
    return { stdout: failed.stdout ?? '', stderr: (failed.stderr ?? '') + killed, code: failed.code ?? 1 };
  }
}
