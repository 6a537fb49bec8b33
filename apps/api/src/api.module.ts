import { CatalogHttpModule } from '@deals/catalog';
import { ServiceCoreModule, ServiceCoreOptions } from '@deals/runtime';
import { ErrorFilter, PartnerRoleGuard } from '@deals/wire';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';
import { HealthController } from './health.controller';

/** Strips secrets from what the request log shows of a URL (the v1 api_key rides in the query). */
export function loggableUrl(url: string | undefined): string {
  if (!url) return '';
  return url.replace(/([?&](?:api_key|access_token|password)=)[^&]*/gi, '$1[redacted]');
}

/** The HTTPS API process: the shared core plus the contexts' routes, auth, errors and logs. */
@Module({})
export class ApiModule {
  static forRoot(options: Omit<ServiceCoreOptions, 'role'>): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ServiceCoreModule.forRoot({ ...options, role: 'api' }),
        LoggerModule.forRoot({
          forRoutes: ['*path'],
          pinoHttp: {
            level: options.config.logLevel,
            genReqId: (req: IncomingMessage) => (req as IncomingMessage & { requestId?: string }).requestId ?? 'unknown',
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: loggableUrl(req.url) }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
          },
        }),
        TerminusModule,
        CatalogHttpModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_GUARD, useClass: PartnerRoleGuard },
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}
