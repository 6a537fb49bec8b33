import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import { CreatePartner, CreatedPartner, PartnerRole } from '@deals/accounts';
import type { RegionTerms } from '@deals/catalog';
import {
  appendToStream,
  EventMetadata,
  EventStore,
  LogPosition,
  ManualClock,
  OPERATOR,
  RecordedEvent,
  SequentialIdGenerator,
} from '@deals/kernel';
import { CatalogueImport, DealImportRecord, loadServiceConfig, ProjectionHost } from '@deals/runtime';
import { MemoryEventStore } from '@deals/testing';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { buildApi, BuiltApi } from '../../apps/api/src/bootstrap';
import { describeApi } from '../../apps/api/src/api-description';
import { ResponseCheck } from './response-check';
import { tempDir } from './temp-dir';
import { UNLIMITED } from './unlimited';

/** A request as the API tier sends it: through Fastify's `inject`, no socket. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  /** Sent as the `api_key` query parameter. */
  apiKey?: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
}

/** An event the log is given: appended to its stream, whatever the stream holds. */
export interface GivenEvent {
  streamId: string;
  type: string;
  data: unknown;
  metadata?: Partial<EventMetadata>;
}

/** What a request got: its answer, and the events it appended, each stream's types in order. */
export class ApiOutcome {
  constructor(
    readonly status: number,
    readonly headers: Record<string, unknown>,
    readonly body: any,
    /** The events appended from the request's start to its answer (and the views' catching up), in log order. */
    readonly events: RecordedEvent[],
  ) {}

  /** The answer's status, and a body holding at least `body`'s fields. */
  thenAnswers(status: number, body?: unknown): void {
    expect({ status: this.status, body: this.body }).toMatchObject(body === undefined ? { status } : { status, body });
  }

  /** Exactly these streams were written, each with these event types in order (`{}`: none). */
  thenEvents(expected: Record<string, string[]>): void {
    const written: Record<string, string[]> = {};
    for (const event of this.events) (written[event.streamId] ??= []).push(event.type);
    expect(written).toEqual(expected);
  }
}

/**
 * The API tier: the application's HTTP handlers, built once per suite as the API process builds
 * them (every hook, guard, filter and the Idempotency-Key store), over a log in memory, answering
 * Fastify's `inject`: no process, no socket, no TLS. The views are folded by the application's own
 * projection host (its mingo view store in a temporary folder); each case waits for them.
 *
 * Given events (or the application's own commands: a partner, a catalogue), when a request, then the
 * answer and the events it appended. Every answer is checked against the API description, as the
 * end-to-end harness checks them.
 */
export class ApiSpec {
  private check?: ResponseCheck;

  private constructor(
    private readonly built: BuiltApi,
    /** The log in memory, as stored (personal data encrypted). */
    readonly stored: MemoryEventStore,
    readonly clock: ManualClock,
    private readonly removeDir: () => void,
  ) {}

  static async build(options: { now?: string; env?: Record<string, string> } = {}): Promise<ApiSpec> {
    const dir = tempDir('api-spec');
    const clock = new ManualClock(new Date(options.now ?? '2026-06-15T12:00:00Z'));
    const config = loadServiceConfig({
      DATA_DIR: dir.path,
      PORT: '0',
      HOST: '127.0.0.1',
      DEMO_DATA: 'off',
      LOG_LEVEL: 'silent',
      ...UNLIMITED,
      ...options.env,
    });
    // nestjs-pino keeps the first application's logger for the lines written outside a request.
    __resetOutOfContextForTests();
    const stored = new MemoryEventStore();
    const built = await buildApi({ config, clock, ids: new SequentialIdGenerator('t'), log: stored });
    return new ApiSpec(built, stored, clock, dir.remove);
  }

  get<T>(type: abstract new (...args: never[]) => T): T {
    return this.built.app.get(type as never) as T;
  }

  /** The log as the application reads it (personal data decrypted). */
  get log(): EventStore {
    return this.get(EventStore);
  }

  /** Appends the events (each to its stream, as they come), then waits for the views to hold them. */
  async given(...events: GivenEvent[]): Promise<void> {
    for (const { streamId, type, data, metadata } of events)
      await appendToStream(
        this.log,
        streamId,
        [{ id: randomUUID(), type, data, metadata: { occurredAt: this.clock.now().toISOString(), ...metadata } }],
        'any',
      );
    await this.settle();
  }

  /** A partner made by the application's own command; its id and API key. */
  async givenPartner(name = 'Test partner', role: PartnerRole = 'partner'): Promise<CreatedPartner> {
    const partner = await this.get(CommandBus).execute(new CreatePartner(name, role, OPERATOR));
    await this.settle();
    return partner;
  }

  /** Regions and deals imported as the operator imports a catalogue. */
  async givenCatalogue(regions: RegionTerms[], deals: DealImportRecord[]): Promise<void> {
    const catalogue = this.get(CatalogueImport);
    await catalogue.regions(regions, OPERATOR);
    await catalogue.deals(deals, OPERATOR);
    await this.settle();
  }

  /** Sends the request; its answer and the events it appended. */
  async when(request: ApiRequest): Promise<ApiOutcome> {
    const before = await this.log.head();
    const reply = await this.send(request);
    await this.settle();
    return new ApiOutcome(reply.status, reply.headers, reply.body, await this.after(before));
  }

  /** Sends a request (a step of a case's setup), its answer checked against the description. */
  async send(request: ApiRequest): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
    const url = new URL(request.url, 'https://localhost');
    if (request.apiKey !== undefined) url.searchParams.set('api_key', request.apiKey);
    const json = request.body !== undefined;
    const reply = await this.built.app
      .getHttpAdapter()
      .getInstance()
      .inject({
        method: request.method,
        url: url.pathname + url.search,
        headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...request.headers },
        ...(json ? { payload: JSON.stringify(request.body) } : {}),
      });
    const type = String(reply.headers['content-type'] ?? '');
    const body = reply.body && type.startsWith('application/json') ? reply.json() : reply.body;
    this.responses.check(request.method, url.pathname, reply.statusCode, type.startsWith('application/json') ? body : undefined, type);
    return { status: reply.statusCode, headers: reply.headers, body };
  }

  /** Waits until every view holds everything in the log. */
  settle(): Promise<void> {
    return this.get(ProjectionHost).waitForAll();
  }

  private async after(position: LogPosition | null): Promise<RecordedEvent[]> {
    return this.log.readAll({ after: position, maxCount: Number.MAX_SAFE_INTEGER });
  }

  private get responses(): ResponseCheck {
    this.check ??= new ResponseCheck(describeApi(this.built.app, 'https://localhost'));
    return this.check;
  }

  async close(): Promise<void> {
    this.built.stopping();
    await this.built.close();
    this.removeDir();
  }
}
