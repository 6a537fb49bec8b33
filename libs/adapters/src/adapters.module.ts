import {
  Clock,
  ErasureEvents,
  EventStore,
  IdempotencyStore,
  IdGenerator,
  Mailer,
  PaymentGateway,
  PersonalDataEventStore,
  PersonalFields,
  RandomIdGenerator,
  Scheduler,
  SealStore,
  StoreObserver,
  SystemClock,
  TestClockAwareClock,
  TestClockRunner,
  UsageStore,
  ViewStore,
} from '@deals/kernel';
import { DynamicModule, Global, Logger, Module, Provider } from '@nestjs/common';
import { join } from 'node:path';
import { SqliteEventStore } from './event-store/sqlite/sqlite-event-store.adapter';
import { PostgresEventStore } from './event-store/postgres/postgres-event-store.adapter';
import { PostgresSnapshotStore } from './snapshot-store/postgres-snapshot-store.adapter';
import { SqliteSnapshotStore } from './snapshot-store/sqlite-snapshot-store.adapter';
import { PostgresIdempotencyStore } from './idempotency-store/postgres-idempotency-store.adapter';
import { SqliteIdempotencyStore } from './idempotency-store/sqlite-idempotency-store.adapter';
import { PostgresUsageStore } from './usage-store/postgres-usage-store.adapter';
import { PostgresSealStore } from './seal-store/postgres-seal-store.adapter';
import { SqliteSealStore } from './seal-store/sqlite-seal-store.adapter';
import { PostgresPersonalKeyStore } from './personal-key-store/postgres-personal-key-store.adapter';
import { SqlitePersonalKeyStore } from './personal-key-store/sqlite-personal-key-store.adapter';
import { SqliteUsageStore } from './usage-store/sqlite-usage-store.adapter';
import { SimulatedPaymentGateway } from './payment-gateway/simulated/simulated-payment-gateway.adapter';
import { PostgresPaymentVault } from './payment-gateway/simulated/postgres-payment-vault';
import { SqlitePaymentVault } from './payment-gateway/simulated/sqlite-payment-vault';
import { TimersScheduler } from './scheduler/timers/timers-scheduler.adapter';
import { TestClockAgenda } from './scheduler/test-clock-agenda';
import { OutboxMailer } from './mailer/outbox/outbox-mailer.adapter';
import { MingoViewStore } from './view-store/mingo/mingo-view-store.adapter';
import { PostgresViewStore } from './view-store/postgres/postgres-view-store.adapter';

/** The settings that choose and connect the adapters. */
export interface AdapterSettings {
  dataDir: string;
  eventStoreUrl: string | null;
  /** `postgres://`: the event log on PostgreSQL, and the views (unless MONGO_URL). */
  databaseUrl: string | null;
  mongoUrl: string | null;
  mongoDb: string;
  redisUrl: string | null;
  redisPrefix: string;
  /** `smtp://` or `smtps://`; null: the outbox folder. */
  smtpUrl: string | null;
  mailFrom: string;
  mailReplyTo: string | null;
}

export interface AdaptersOptions {
  settings: AdapterSettings;
  /** Tests pass a clock they move by hand, or ids they can predict. */
  clock?: Clock;
  ids?: IdGenerator;
  /** The installation's secret for card fingerprints. */
  cardFingerprintPepper: Buffer;
  /** How long the simulated processor's slow test card takes (ms). */
  slowCardMs?: number;
  /** Load the embedded views when first used, not at start (the CLI). */
  viewsOnFirstUse?: boolean;
  /** Which events hold personal data (encrypted under each user's key in the log), and which erase it. */
  personalData?: { fields: PersonalFields; erasures: ErasureEvents };
  /** Told of what the event log writes (the process's count of its appends, its metrics). */
  storeObserver?: StoreObserver | null;
  /** The log to keep instead of the configured one (tests: a log in memory); its personal data encrypted all the same. */
  log?: EventStore;
}

/** Whether this process's log writes view documents in its appends' transactions (its provider wires them). */
const INLINE_VIEWS = Symbol('INLINE_VIEWS');

/** The embedded file layout under DATA_DIR. */
export const dataPaths = (dataDir: string) => ({
  events: join(dataDir, 'events.sqlite'),
  snapshots: join(dataDir, 'snapshots.sqlite'),
  idempotency: join(dataDir, 'idempotency.sqlite'),
  usage: join(dataDir, 'usage.sqlite'),
  seals: join(dataDir, 'seals.sqlite'),
  personalKeys: join(dataDir, 'personal-keys.sqlite'),
  views: join(dataDir, 'views'),
  paymentVault: join(dataDir, 'payment-vault.sqlite'),
  outbox: join(dataDir, 'outbox'),
});

/**
 * The one place that chooses adapters (the servers' clients are loaded only when configured: they
 * are most of the modules a process would otherwise load at start): the embedded one for each port unless its server is
 * configured (EVENTSTORE_URL, MONGO_URL, REDIS_URL). Closing them is the caller's job, in order.
 */
@Global()
@Module({})
export class AdaptersModule {
  static forRoot({
    settings,
    clock = new SystemClock(),
    ids = new RandomIdGenerator(),
    cardFingerprintPepper,
    slowCardMs,
    viewsOnFirstUse = false,
    personalData = { fields: new Map(), erasures: new Map() },
    storeObserver: observer = null,
    log,
  }: AdaptersOptions): DynamicModule {
    const paths = dataPaths(settings.dataDir);
    const providers: Provider[] = [
      // Work done under a sandbox's test clock keeps the clock's time; everything else real time.
      { provide: Clock, useValue: new TestClockAwareClock(clock) },
      { provide: IdGenerator, useValue: ids },
      {
        provide: EventStore,
        useFactory: async () => {
          // Personal data's keys beside the log: in its PostgreSQL database, else a file of the data folder.
          const keys =
            settings.databaseUrl && !settings.eventStoreUrl
              ? new PostgresPersonalKeyStore(settings.databaseUrl)
              : new SqlitePersonalKeyStore(paths.personalKeys);
          const { fields, erasures } = personalData;
          const warn = (message: string) => new Logger('PersonalData').error(message);
          if (log) return new PersonalDataEventStore(log, keys, fields, erasures, warn);
          if (settings.eventStoreUrl) {
            const { EsdbEventStore } = await import('./event-store/esdb/esdb-event-store.adapter');
            return new PersonalDataEventStore(new EsdbEventStore(settings.eventStoreUrl, { observer }), keys, fields, erasures, warn);
          }
          // Snapshots of long streams beside the log (none beside EventStoreDB: its streams are folded whole).
          const store = settings.databaseUrl
            ? new PostgresEventStore(settings.databaseUrl, { observer })
            : new SqliteEventStore(paths.events, { observer });
          store.snapshots = settings.databaseUrl
            ? new PostgresSnapshotStore(settings.databaseUrl)
            : new SqliteSnapshotStore(paths.snapshots);
          return new PersonalDataEventStore(store, keys, fields, erasures, warn);
        },
      },
      { provide: PersonalDataEventStore, useExisting: EventStore },
      // Beside the log: PostgreSQL's database, or a file of the data folder (also beside EventStoreDB,
      // where it serves one API process: replicas on EventStoreDB would not share their keys).
      {
        provide: IdempotencyStore,
        useFactory: () =>
          settings.databaseUrl && !settings.eventStoreUrl
            ? new PostgresIdempotencyStore(settings.databaseUrl)
            : new SqliteIdempotencyStore(paths.idempotency),
      },
      // Chosen as the idempotency store is: beside EventStoreDB, each API process has its own figures.
      {
        provide: UsageStore,
        useFactory: () =>
          settings.databaseUrl && !settings.eventStoreUrl
            ? new PostgresUsageStore(settings.databaseUrl)
            : new SqliteUsageStore(paths.usage),
      },
      // Beside the log: in its PostgreSQL database, or a file of the data folder (also beside EventStoreDB).
      {
        provide: SealStore,
        useFactory: () =>
          settings.databaseUrl && !settings.eventStoreUrl ? new PostgresSealStore(settings.databaseUrl) : new SqliteSealStore(paths.seals),
      },
      {
        provide: ViewStore,
        useFactory: async () =>
          settings.mongoUrl
            ? new (await import('./view-store/mongo/mongo-view-store.adapter')).MongoViewStore(settings.mongoUrl, settings.mongoDb)
            : settings.databaseUrl
              ? new PostgresViewStore(settings.databaseUrl)
              : new MingoViewStore(paths.views, {}, undefined, viewsOnFirstUse, 'as-defined'),
      },
      // The log and the views in one PostgreSQL database: documents a request writes with its events
      // go in their transaction (`EventStore.appendWithViews`).
      {
        provide: INLINE_VIEWS,
        inject: [EventStore, ViewStore],
        useFactory: (events: EventStore, views: ViewStore) => {
          const log = events instanceof PersonalDataEventStore ? events.inner : events;
          const inline = log instanceof PostgresEventStore && views instanceof PostgresViewStore;
          if (inline) log.writeViewsInto(views);
          return inline;
        },
      },
      // The only processor so far is the simulated one (documented test cards); a real one plugs in here.
      // Its vault beside the log: in its PostgreSQL database (the data folder's file copied in when the
      // tables are first made), else a file of the data folder.
      {
        provide: PaymentGateway,
        useFactory: () =>
          new SimulatedPaymentGateway(
            settings.databaseUrl && !settings.eventStoreUrl
              ? new PostgresPaymentVault(settings.databaseUrl, paths.paymentVault)
              : new SqlitePaymentVault(paths.paymentVault),
            { pepper: cardFingerprintPepper, slowMs: slowCardMs },
          ),
      },
      {
        provide: Mailer,
        useFactory: async () => {
          const mail = { from: settings.mailFrom, replyTo: settings.mailReplyTo };
          if (settings.smtpUrl) return new (await import('./mailer/smtp/smtp-mailer.adapter')).SmtpMailer(settings.smtpUrl, mail);
          return new OutboxMailer(paths.outbox, mail);
        },
      },
      {
        provide: Scheduler,
        inject: [EventStore],
        useFactory: async (store: EventStore) =>
          new TestClockAgenda(
            settings.redisUrl
              ? new (await import('./scheduler/bullmq/bullmq-scheduler.adapter')).BullmqScheduler({
                  url: settings.redisUrl,
                  prefix: settings.redisPrefix,
                  clock,
                })
              : new TimersScheduler(clock),
            store,
            clock,
          ),
      },
      { provide: TestClockRunner, useExisting: Scheduler },
    ];
    return { module: AdaptersModule, providers, exports: providers };
  }
}
