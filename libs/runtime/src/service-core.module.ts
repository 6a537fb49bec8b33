import { DailyDigestJobs, DeliverDueBatches, DigestSettings, MessagingModule, OwnAddresses } from '@deals/messaging';
import { SettlementModule } from '@deals/settlement';
import { BulkJobRunner, BulkJobsModule } from '@deals/bulk-jobs';
import { CardLinkSettings, EngagementModule, KeyedUnsubscribeLinks, UnsubscribeLinks } from '@deals/engagement';
import { AccountsModule, AccountsSettings, FinishErasures, TEST_CLOCKS, TestClockView } from '@deals/accounts';
import { AdaptersModule, sealingThreadFor } from '@deals/adapters';
import { MemberAddresses, MemberNoticeRecipients, PartnerSiteModule, SiteSecrets } from '@deals/partner-site';
import { CatalogLinks, CatalogModule } from '@deals/catalog';
import {
  Clock,
  EventStore,
  registerInlineProjections,
  IdempotencyStore,
  IdGenerator,
  PaymentGateway,
  Scheduler,
  ViewProgress,
  ViewStore,
  Mailer,
  TestClockRunner,
  UsageStore,
  SealStore,
  storedLog,
  realClockOf,
  HistoryProofs,
  AppendsCounted,
  observingAll,
  snapshotsOf,
  warmUp,
} from '@deals/kernel';
import { UsageMeter } from '@deals/wire';
import {
  CouponCodeKey,
  CouponExpirySettings,
  CouponLinks,
  ExpireCoupons,
  KeyedCouponLinks,
  PurchasingModule,
  RecoverInterruptedPayments,
  ReleaseExpiredHolds,
  FinishResaleBuyerErasures,
} from '@deals/purchasing';
import { DynamicModule, Global, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { CatalogueImport } from './catalogue-import';
import { DemoSeed } from './demo-seed';
import { PROJECTIONS, ProjectionHost } from './projection-host';
import { ALL_PROJECTIONS } from './projections';

/** The views that run inline, as registered (see `registerInlineProjections`). */
const INLINE_PROJECTIONS = Symbol('INLINE_PROJECTIONS');
import { ServiceConfig } from './service-config';
import { installationSecret } from './installation-secret';
import {
  DeliverWebhooks,
  EventFeedModule,
  WebhookNoticeRecipients,
  WebhookSecrets,
  WebhookSender,
  WebhookSettings,
} from '@deals/event-feed';
import { DataDirLock } from './data-dir-lock';
import { ForgetTestClockKeys } from './forget-test-clock-keys';
import { HistorySealing } from './history-sealing';
import { ServiceMetrics } from './service-metrics';
import { StoreMetrics } from './store-metrics';
import { PERSONAL_DATA } from './personal-data';

/** Which process this is: what it runs beside the shared core. */
export type ProcessRole = 'api' | 'worker' | 'cli';

export interface ServiceCoreOptions {
  config: ServiceConfig;
  role: ProcessRole;
  clock?: Clock;
  ids?: IdGenerator;
  /** The log to keep instead of the configured one (tests: a log in memory). */
  log?: EventStore;
}

const ROLE = Symbol('ROLE');

/** Starts what this process runs, and closes it all in order on shutdown. */
@Injectable()
class ServiceLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly host: ProjectionHost,
    private readonly scheduler: Scheduler,
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly gateway: PaymentGateway,
    private readonly holds: ReleaseExpiredHolds,
    private readonly recovery: RecoverInterruptedPayments,
    private readonly config: ServiceConfig,
    private readonly options: { role: ProcessRole },
    private readonly batches: DeliverDueBatches,
    private readonly mailer: Mailer,
    private readonly digests: DailyDigestJobs,
    private readonly idempotency: IdempotencyStore,
    private readonly usage: UsageMeter,
    private readonly usageStore: UsageStore,
    private readonly webhooks: DeliverWebhooks,
    private readonly webhookSender: WebhookSender,
    private readonly couponExpiry: ExpireCoupons,
    private readonly clocks: TestClockRunner,
    private readonly erasures: FinishErasures,
    private readonly buyerErasures: FinishResaleBuyerErasures,
    private readonly sealing: HistorySealing,
    private readonly bulkJobs: BulkJobRunner,
  ) {}

  private lock: DataDirLock | null = null;
  private readonly logger = new Logger('Service');

  async onApplicationBootstrap(): Promise<void> {
    // The embedded API keeps the views, recovers and runs the jobs as if alone: one per data folder.
    if (this.options.role === 'api' && this.config.runProjections) this.lock = DataDirLock.claim(this.config.dataDir);
    // The threads a first purchase would start and wait for boot beside the views' loading instead.
    if (this.options.role !== 'cli') {
      warmUp(this.store);
      this.gateway.warmUp();
      if (this.options.role === 'api') this.idempotency.warmUp();
    }
    await this.host.defineAll();
    // The process that keeps the views also runs the jobs: the API when embedded, the worker otherwise.
    if (this.options.role === 'cli' || !this.config.runProjections) return;
    await this.host.startAll();
    await this.scheduler.start();
    await this.host.waitForAll();
    // A worker starts beside API processes that may be in the middle of purchases; an embedded API is alone.
    await this.recovery.run({ othersMayBeBuying: this.options.role === 'worker' });
    await this.erasures.run();
    await this.buyerErasures.run();
    await this.holds.rearm();
    await this.batches.rearm();
    await this.digests.rearm();
    await this.webhooks.rearm();
    await this.couponExpiry.rearm();
    await this.bulkJobs.rearm();
    // An advance a stopped process left half done goes on (its jobs already run are recorded).
    for (const clock of await this.views.find<TestClockView>(TEST_CLOCKS, { status: 'advancing' }))
      await this.clocks.advanceSoon(clock._id, clock.advancingTo!);
  }

  async onApplicationShutdown(): Promise<void> {
    // The answers counted since the last flush, stored while the store is still open.
    await this.usage.stop().catch((error) => this.logger.error(`usage counts since the last flush are lost: ${String(error)}`));
    await this.host.stopAll();
    await this.scheduler.close();
    await this.mailer.close();
    this.webhookSender.close();
    await this.gateway.close();
    await this.idempotency.close();
    await this.usageStore.close();
    // Everything this process wrote is committed by now: sealed before the log closes.
    await this.sealing.close();
    await this.store.close();
    await snapshotsOf(this.store)?.close();
    await this.views.close();
    this.lock?.release();
  }
}

/**
 * Everything every process of the service shares: configuration, adapters, the bounded contexts'
 * commands and queries, the projections and their host. The API adds HTTP; the worker and the CLI
 * add their own parts.
 */
@Global()
@Module({})
export class ServiceCoreModule {
  static forRoot({ config, role, clock, ids, log }: ServiceCoreOptions): DynamicModule {
    // The log's observers, given to it as it opens: the count of its appends (for the seal), and the metrics when they are on.
    const appends = new AppendsCounted();
    const storeMetrics = new StoreMetrics();
    return {
      module: ServiceCoreModule,
      imports: [
        AdaptersModule.forRoot({
          settings: config,
          clock,
          ids,
          cardFingerprintPepper: installationSecret(config.dataDir, 'card-fingerprint'),
          slowCardMs: config.slowCardMs,
          // The CLI's commands use a few views or none: each is loaded when first used.
          viewsOnFirstUse: role === 'cli',
          personalData: PERSONAL_DATA,
          storeObserver: config.metrics ? observingAll(appends, storeMetrics) : appends,
          log,
        }),
        CqrsModule.forRoot(),
        AccountsModule,
        CatalogModule,
        PurchasingModule,
        EngagementModule,
        MessagingModule,
        SettlementModule,
        BulkJobsModule,
        PartnerSiteModule,
        EventFeedModule,
      ],
      providers: [
        { provide: ServiceConfig, useValue: config },
        { provide: StoreMetrics, useValue: storeMetrics },
        { provide: ROLE, useValue: { role } },
        { provide: PROJECTIONS, useValue: ALL_PROJECTIONS },
        // The views that run inline, registered once with the log's command engine.
        {
          provide: INLINE_PROJECTIONS,
          inject: [EventStore],
          useFactory: (store: EventStore) =>
            registerInlineProjections(
              store,
              ALL_PROJECTIONS.filter((projection) => projection.inline),
            ),
        },
        {
          provide: AccountsSettings,
          useValue: {
            signupCreditCents: config.signupCreditCents,
            defaultAvatarUrl: `${config.siteBaseUrl}/images/users/default-avatar.png`,
            liveTakesTestCards: config.liveTakesTestCards,
          },
        },
        { provide: CouponLinks, useValue: new KeyedCouponLinks(config.publicBaseUrl, installationSecret(config.dataDir, 'coupon-links')) },
        { provide: DigestSettings, useValue: { hour: config.digestHour } },
        { provide: CouponExpirySettings, useValue: { sweepMs: config.couponExpirySweepMs } },
        { provide: SiteSecrets, useValue: new SiteSecrets(installationSecret(config.dataDir, 'partner-site')) },
        { provide: WebhookSecrets, useValue: new WebhookSecrets(installationSecret(config.dataDir, 'webhook-secrets')) },
        // The feed emails an endpoint's disabling to the partner site's people (a port: the feed does not depend on the site).
        { provide: WebhookNoticeRecipients, useClass: MemberNoticeRecipients },
        // A sandbox emails for real only the partner site's people (a port: messaging does not depend on the site).
        { provide: OwnAddresses, useClass: MemberAddresses },
        {
          provide: WebhookSettings,
          useValue: {
            allowPrivateAddresses: config.webhookAllowPrivateAddresses,
            retryDelaysMs: config.webhookRetryDelaysMs,
            timeoutMs: config.webhookTimeoutMs,
          },
        },
        { provide: CardLinkSettings, useValue: { clockSkewMs: config.cardLinkClockSkewS * 1000 } },
        {
          provide: UnsubscribeLinks,
          useValue: new KeyedUnsubscribeLinks(config.publicBaseUrl, installationSecret(config.dataDir, 'unsubscribe-links')),
        },
        { provide: CouponCodeKey, useValue: { secret: installationSecret(config.dataDir, 'coupon-codes') } },
        {
          provide: CatalogLinks,
          useValue: { apiBaseUrl: config.publicBaseUrl, siteBaseUrl: config.siteBaseUrl, imageBaseUrl: config.imageBaseUrl },
        },
        ProjectionHost,
        { provide: ViewProgress, useExisting: ProjectionHost },
        {
          provide: ServiceLifecycle,
          useFactory: (...deps: ConstructorParameters<typeof ServiceLifecycle>) => new ServiceLifecycle(...deps),
          inject: [
            ProjectionHost,
            Scheduler,
            EventStore,
            ViewStore,
            PaymentGateway,
            ReleaseExpiredHolds,
            RecoverInterruptedPayments,
            ServiceConfig,
            ROLE,
            DeliverDueBatches,
            Mailer,
            DailyDigestJobs,
            IdempotencyStore,
            UsageMeter,
            UsageStore,
            DeliverWebhooks,
            WebhookSender,
            ExpireCoupons,
            TestClockRunner,
            FinishErasures,
            FinishResaleBuyerErasures,
            HistorySealing,
            BulkJobRunner,
          ],
        },
        UsageMeter,
        {
          provide: HistorySealing,
          useFactory: (store: EventStore, seals: SealStore, serviceClock: Clock) => {
            const [clock, secret] = [realClockOf(serviceClock), installationSecret(config.dataDir, 'checkpoint-signing')];
            // The seal is of the log as stored: personal data's ciphertext, which erasure leaves in place.
            const log = storedLog(store);
            return new HistorySealing(
              log,
              seals,
              clock,
              secret,
              {
                seals: role !== 'cli' && config.runProjections,
                everyMs: config.sealEveryMs,
                sealsOwnWrites: role === 'cli',
                appendsAcknowledged: () => appends.count,
              },
              sealingThreadFor(log, seals, secret, clock),
            );
          },
          inject: [EventStore, SealStore, Clock],
        },
        { provide: HistoryProofs, useExisting: HistorySealing },
        CatalogueImport,
        DemoSeed,
        ServiceMetrics,
        ForgetTestClockKeys,
      ],
      exports: [
        HistorySealing,
        HistoryProofs,
        ServiceMetrics,
        UsageMeter,
        ServiceConfig,
        PROJECTIONS,
        CatalogLinks,
        CouponLinks,
        CouponCodeKey,
        UnsubscribeLinks,
        DigestSettings,
        CouponExpirySettings,
        SiteSecrets,
        WebhookSecrets,
        WebhookSettings,
        WebhookNoticeRecipients,
        OwnAddresses,
        AccountsSettings,
        CardLinkSettings,
        ProjectionHost,
        ViewProgress,
        CatalogueImport,
        DemoSeed,
        AccountsModule,
        CatalogModule,
        PurchasingModule,
        EngagementModule,
        MessagingModule,
        SettlementModule,
        BulkJobsModule,
        EventFeedModule,
      ],
    };
  }
}
