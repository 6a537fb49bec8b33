import { AccountsHttpModule } from '@deals/accounts';
import { CatalogHttpModule } from '@deals/catalog';
import { EngagementHttpModule } from '@deals/engagement';
import { EventFeedHttpModule } from '@deals/event-feed';
import { MessagingHttpModule } from '@deals/messaging';
import { SettlementHttpModule } from '@deals/settlement';
import { BulkJobsHttpModule } from '@deals/bulk-jobs';
import { PartnerSiteHttpModule } from '@deals/partner-site';
import { PurchasingHttpModule } from '@deals/purchasing';
import { ServiceCoreModule, ServiceCoreOptions } from '@deals/runtime';
import { AccessGuard, ErrorFilter, RequestLimits, RequestValidationPipe } from '@deals/wire';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { HealthController } from './health.controller';
import { HistorySealController } from './history-seal.controller';
import { AuditPagesController } from './audit-pages/audit-pages.controller';

/** The HTTPS API process: the shared core plus the contexts' routes, auth, errors and logs. */
@Module({})
export class ApiModule {
  static forRoot(options: Omit<ServiceCoreOptions, 'role'> & { logger: Logger; limits: RequestLimits | null }): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ServiceCoreModule.forRoot({ config: options.config, clock: options.clock, ids: options.ids, log: options.log, role: 'api' }),
        // Application logs through the process's pino logger; request lines come from Fastify's
        // logger (RequestLogController), so no per-request Nest middleware runs.
        LoggerModule.forRoot({ pinoHttp: { logger: options.logger }, forRoutes: [] }),
        TerminusModule,
        CatalogHttpModule,
        AccountsHttpModule,
        PurchasingHttpModule,
        EngagementHttpModule,
        EventFeedHttpModule,
        MessagingHttpModule,
        SettlementHttpModule,
        BulkJobsHttpModule,
        PartnerSiteHttpModule.forRoot({ limits: options.limits }),
      ],
      controllers: [HealthController, HistorySealController, AuditPagesController],
      providers: [
        { provide: APP_GUARD, useClass: AccessGuard },
        { provide: APP_FILTER, useClass: ErrorFilter },
        { provide: APP_PIPE, useClass: RequestValidationPipe },
      ],
    };
  }
}
