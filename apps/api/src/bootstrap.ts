import { Clock, EventStore, IdempotencyStore, IdGenerator, Scheduler, ViewProgress, ViewStore } from '@deals/kernel';
import { answerRefusalPage, MemberSessions, serveSite, SITE_PREFIX, SiteDependencies, SitePages, SiteSecrets } from '@deals/partner-site';
import {
  defaultPublicBaseUrl,
  DemoSeed,
  installationSecret,
  localApiUrl,
  operatorPassword,
  prepareServers,
  recordApiAddress,
  ServiceConfig,
  ServiceMetrics,
} from '@deals/runtime';
import {
  answerAfterTheViewsShowTheWrites,
  readAfterDeferredWrites,
  answerClientError,
  answerRepeatedRequests,
  answerUnservedRequests,
  authenticateEveryRequest,
  keepTestClocks,
  connectionCap,
  CredentialVerifier,
  RequestLimits,
  errorBody,
  listenHttpsOnly,
  logAbortedRequests,
  logRefusedBeforeRouting,
  parseFormBodies,
  parseJsonBodies,
  purgeExpiredKeys,
  PURGE_EVERY_S,
  purgeOldUsage,
  readBodiesBeforeClosing,
  refuseMalformedText,
  shapeErrorBodies,
  refuseRequestsWithoutHost,
  RequestLogController,
  RequestsInFlight,
  serviceLogger,
  ServiceLogLines,
  trackRequestsInFlight,
  trustedProxyHops,
  UsageMeter,
} from '@deals/wire';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as HttpsServer } from 'node:https';
import { Redis } from 'ioredis';
import { ApiModule } from './api.module';
import { tlsMaterial } from './tls-material';
import { publishApiDescription } from './api-description';
import { mountQueueBoard, recordAnswers, serveJobList, serveMetrics } from './operations';

export interface RunningApi {
  app: NestFastifyApplication;
  port: number;
  /** Every route the server serves (method and Fastify's path pattern). */
  routes: Array<{ method: string; url: string }>;
  /**
   * The requests being worked on, whether or not their client still waits for the answer.
   */
  requestsInFlight: RequestsInFlight;
  /**
   * Stops accepting, finishes the requests already received (for up to `graceMs`), those whose
   * client went away included, then closes every adapter.
   */
  close(graceMs?: number): Promise<void>;
}

export interface ApiOptions {
  config: ServiceConfig;
  clock?: Clock;
  ids?: IdGenerator;
  /** The log to keep instead of the configured one (tests: a log in memory). */
  log?: EventStore;
}

/** The API built and ready, not listening: Fastify's `inject` reaches it (the tests' API tier). */
export interface BuiltApi {
  app: NestFastifyApplication;
  /** Every route the server serves (method and Fastify's path pattern). */
  routes: Array<{ method: string; url: string }>;
  requestsInFlight: RequestsInFlight;
  logger: ReturnType<typeof serviceLogger>;
  /** From now on every answer closes its connection (the process is stopping). */
  stopping(): void;
  /** Closes the application, then what runs beside it (the purges, Redis, the metrics server). */
  close(): Promise<void>;
}

const HOUR_MS = 3_600_000;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** How long a stop waits for the requests in flight when not told (SHUTDOWN_GRACE_MS is the service's). */
const STOP_GRACE_MS = 2_000;
/** The longest part of an address the router takes (Fastify's default is 100). */
const MAX_PATH_PART = 1024;

/** A request id: the caller's `X-Request-Id` when it is sane, a new UUID otherwise. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Builds the API, loads demo data on a first start, and listens (HTTPS only). */
export async function startApi(options: ApiOptions): Promise<RunningApi> {
  const { config } = options;
  const built = await buildApi(options);
  const { app, routes, requestsInFlight, logger } = built;
  const { cap: maxConnections, limit } = connectionCap(config.maxConnections);
  if (maxConnections < config.maxConnections)
    logger.warn(
      `MAX_CONNECTIONS is ${config.maxConnections} but the open-file limit is ${limit}: at most ${maxConnections} connections at once (raise the limit: ulimit -n, LimitNOFILE)`,
    );
  const front = config.behindTlsProxy
    ? await listenBehindProxy(app, config, maxConnections, requestsInFlight)
    : await listenHttpsOnly(app.getHttpServer() as HttpsServer, config.port, config.host, {
        handshakeTimeoutMs: config.handshakeTimeoutMs,
        maxConnections,
        requestsInFlight,
      });
  const port = (front.server.address() as AddressInfo).port;
  const forget = recordAddress(config, port);
  return {
    app,
    port,
    routes,
    requestsInFlight,
    close: async (graceMs?: number) => {
      built.stopping();
      forget();
      await front.close(graceMs);
      await built.close();
    },
  };
}

/** Listens on plain HTTP behind the TLS proxy; it stops as the HTTPS front does. */
async function listenBehindProxy(
  app: NestFastifyApplication,
  config: ServiceConfig,
  maxConnections: number,
  requestsInFlight: RequestsInFlight,
): Promise<{ server: HttpServer; close(graceMs?: number): Promise<void> }> {
  const server = app.getHttpServer() as HttpServer;
  // Connections past the cap are closed as soon as they are accepted.
  server.maxConnections = maxConnections;
  await app.listen(config.port, config.host);
  return {
    server,
    close: async (graceMs = STOP_GRACE_MS) => {
      // Stops accepting; the requests already received are finished before the adapters close,
      // those whose client left included (they hold no connection for the server's close to wait
      // on). Then what is left is dropped, as the HTTPS front does: connections that sent nothing
      // (they held the stop until Node's headers timeout) and requests past the grace.
      server.close();
      await requestsInFlight.drained(graceMs);
      server.closeAllConnections();
    },
  };
}

/** Builds the API and loads demo data on a first start: everything but listening. */
export async function buildApi({ config, clock, ids, log }: ApiOptions): Promise<BuiltApi> {
  const prepared = await prepareServers(config);
  const logger = serviceLogger(config.logLevel, config.logFile);
  if (prepared) logger.warn(prepared);
  const adapter = new FastifyAdapter({
    // Node's own refusal of a request without Host is an empty 400: refuseRequestsWithoutHost
    // answers it in the error body instead.
    ...(config.behindTlsProxy
      ? { http: { requireHostHeader: false } }
      : { https: { ...(await tlsMaterial(config)), requireHostHeader: false } }),
    genReqId: requestId,
    // Behind the TLS proxy the client's address (for the limits on wrong credentials) is the one the
    // proxies appended to X-Forwarded-For, never an entry a client wrote before theirs.
    trustProxy: config.behindTlsProxy ? trustedProxyHops(config.trustedProxyHops) : false,
    loggerInstance: logger,
    logController: new RequestLogController(),
    bodyLimit: 1024 * 1024,
    // An idle keep-alive connection is closed after this. Behind a TLS proxy it outlasts the
    // proxy's own idle timeout, so that the proxy, not this server, closes first (a request sent
    // on a connection the server is closing would fail).
    keepAliveTimeout: config.behindTlsProxy ? 72_000 : 10_000,
    // A request (headers and body) must arrive within this; Fastify's default (0) let a body sent
    // a byte at a time hold its socket for good. Headers alone: Node's 60 s.
    requestTimeout: 30_000,
    // A path part may be as long as an email address (update_by_email) or longer; past this the
    // router answers 414, in the error body below.
    routerOptions: { maxParamLength: MAX_PATH_PART },
    // Errors the router meets before any hook (a malformed escape, a path part too long): the error
    // body, never Fastify's own, which echoes the address and so the api_key in its query.
    // Requests Node's parser refuses before Fastify sees them (oversized headers, a control
    // character in a header): the error body too.
    clientErrorHandler: answerClientError,
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      logRefusedBeforeRouting(request, status);
      const message =
        status === 414
          ? `a part of the address is longer than ${MAX_PATH_PART} characters`
          : 'the address is malformed (an escape that is not UTF-8)';
      void reply.status(status).send(errorBody('bad_request', message));
    },
  });
  const fastify = adapter.getInstance();
  const routes: RunningApi['routes'] = [];
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    // A route that takes a larger body than the rest says so in its config (a bulk job's items).
    const bodyLimit = (route.config as { bodyLimit?: number } | undefined)?.bodyLimit;
    if (bodyLimit) route.bodyLimit = bodyLimit;
  });
  refuseRequestsWithoutHost(fastify);
  // Before any other onSend hook: it must see every answer.
  const requestsInFlight = trackRequestsInFlight(fastify);
  logAbortedRequests(fastify);
  // An answer that closes its connection (a body refused as too large) waits for the rest of the body.
  readBodiesBeforeClosing(fastify);
  answerUnservedRequests(fastify.server);
  parseJsonBodies(fastify);
  // Form bodies: the partner site's pages, and the routes marked as taking them (the one-click unsubscribe).
  parseFormBodies(fastify, [SITE_PREFIX]);
  // Registered before Nest adds its routes (the hooks go on the routes that write); the store and
  // clock are the application's, known once it is made.
  let idempotency: { store: IdempotencyStore; clock: Clock; metrics: ServiceMetrics } | null = null;
  answerRepeatedRequests(fastify, {
    store: () => idempotency!.store,
    now: () => idempotency!.clock.now().getTime(),
    keepMs: config.idempotencyKeyHours * HOUR_MS,
    maxBytesPerPartner: config.idempotencyMaxMbPerPartner * 1024 * 1024,
    secret: installationSecret(config.dataDir, 'idempotency-keys'),
    onRecordFailed: (error, request) =>
      request.log.error({ err: error }, 'the answer of a request with an Idempotency-Key could not be kept; a retry runs it again'),
    onNotKept: (reason, request, partnerId) => {
      idempotency!.metrics.answersNotKept.inc({ reason });
      request.log.warn({ reason, partner: partnerId }, 'an answer was not kept for repeats of its Idempotency-Key');
    },
  });
  // A route that answers a status in a body of its own (the coupon cancel's 422) gets it from every
  // hook and filter, its kept answers included: its shaping runs before the route's other onSend hooks.
  shapeErrorBodies(fastify);
  // Once the process stops, what it still answers closes its connection: a kept-alive one (a TLS
  // proxy's) would otherwise bring it new requests through the whole grace, which its end cuts short.
  let stopping = false;
  // Every answer, errors that echo a caller's text included, is read only as the type it says.
  fastify.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    void reply.header('x-content-type-options', 'nosniff');
    if (stopping) void reply.header('connection', 'close');
  });
  if (config.behindTlsProxy) {
    fastify.addHook('onRequest', async (request, reply) => {
      if (request.headers['x-forwarded-proto'] !== 'https') {
        await reply.status(403).send(errorBody('https_required', 'plain HTTP is refused: call this service over HTTPS'));
      }
    });
  }
  const limits = requestLimits(config);
  // The partner site's route hooks, on its routes only, as Nest registers them; its services are the application's.
  let site: SiteDependencies | null = null;
  serveSite(fastify, () => site!);
  // Every route's text (path, query, body, kept headers) checked once, before any route's own hooks;
  // the site's forms are refused on its page. Unknown paths keep their 404.
  refuseMalformedText(fastify, { [SITE_PREFIX]: (request, reply, refusal) => answerRefusalPage(site!.pages, request, reply, refusal) });
  // Nest's own body parsers stay off: parseJsonBodies has registered the JSON parser already.
  const app = await NestFactory.create<NestFastifyApplication>(
    ApiModule.forRoot({ config, clock, ids, log, logger, limits: limits?.limits ?? null }),
    adapter,
    {
      bufferLogs: true,
      bodyParser: false,
    },
  );
  app.useLogger(new ServiceLogLines(app.get(Logger)));
  // Nest empties its buffer of log lines only in app.listen(), which the HTTPS front does not
  // call: without this, every line of Nest's Logger (recovery, charges with no answer, undos that
  // failed) stayed in memory for good and was never written.
  app.flushLogs();
  idempotency = { store: app.get(IdempotencyStore), clock: app.get(Clock), metrics: app.get(ServiceMetrics) };
  publishApiDescription(app, config.publicBaseUrl);
  await app.init();
  const verifier = app.get(CredentialVerifier);
  const serviceClock = app.get(Clock);
  site = {
    sessions: app.get(MemberSessions),
    secrets: app.get(SiteSecrets),
    pages: app.get(SitePages),
    views: app.get(ViewStore),
    limits: limits?.limits ?? null,
  };
  const metrics = app.get(ServiceMetrics);
  const usage = app.get(UsageMeter);
  usage.readBudgetsFrom(limits?.limits ?? null);
  recordAnswers(fastify, config.metrics ? metrics : null, usage);
  authenticateEveryRequest(
    fastify,
    () => verifier,
    () => serviceClock.now().getTime(),
    { limits: limits?.limits ?? null, operatorPassword: operatorPassword(config) },
  );
  keepTestClocks(fastify);
  const progress = app.get(ViewProgress);
  answerAfterTheViewsShowTheWrites(fastify, () => progress);
  readAfterDeferredWrites(fastify, () => progress);
  const metricsServer = config.metrics ? await serveMetrics(fastify, metrics, config) : null;
  serveJobList(fastify, app.get(Scheduler));
  await mountQueueBoard(fastify, app.get(Scheduler));
  const stopPurging = purgeExpiredKeys(
    app.get(IdempotencyStore),
    () => serviceClock.now().getTime(),
    PURGE_EVERY_S * 1000,
    (error) => fastify.log.error({ err: error }, 'expired idempotency keys could not be purged; tried again later'),
  );
  const stopPurgingUsage = purgeOldUsage(usage, HOUR_MS / 4, (error) =>
    fastify.log.error({ err: error }, 'old usage counts could not be purged; tried again later'),
  );
  const closeOperations = async () => {
    stopPurging();
    stopPurgingUsage();
    await limits?.redis?.quit().catch(() => limits.redis?.disconnect());
    await new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined)));
  };
  await app.get(DemoSeed).seedIfEmpty();
  await fastify.ready();
  return {
    app,
    routes,
    requestsInFlight,
    logger,
    stopping: () => {
      stopping = true;
    },
    close: async () => {
      await app.close();
      await closeOperations();
    },
  };
}

/** Records in the data folder where this API answers, for the operator's commands; returns what removes it. */
function recordAddress(config: ServiceConfig, port: number): () => void {
  return recordApiAddress(config.dataDir, {
    localUrl: localApiUrl(config, port),
    // The default address names the configured port: the one bound when that was 0 (any free port).
    publicBaseUrl: defaultPublicBaseUrl(config) ? `https://localhost:${port}` : config.publicBaseUrl,
    behindTlsProxy: config.behindTlsProxy,
  });
}

/**
 * The request budgets and the limit on wrong credentials, counted in this process, or on Redis
 * when the service has one (`REDIS_URL`), so that every replica spends the same budgets.
 */
function requestLimits(config: ServiceConfig): { limits: RequestLimits; redis: Redis | null } | null {
  if (!config.rateLimits) return null;
  const settings = {
    partnerPerMinute: config.rateLimitPerMinute,
    userTokenPerMinute: config.userTokenRateLimitPerMinute,
    failuresPerAddress: config.authFailuresPerAddress,
    failuresPerIdentity: config.authFailuresPerAccount,
  };
  if (!config.redisUrl) return { limits: RequestLimits.inMemory(settings), redis: null };
  // No offline queue: while Redis is away a count fails at once and this process counts alone.
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  // Its errors are the counters' (they fall back to memory); /health reports Redis through the scheduler.
  redis.on('error', () => undefined);
  return { limits: RequestLimits.onRedis(settings, redis, config.redisPrefix), redis };
}
