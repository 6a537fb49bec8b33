import { ServiceConfig, ServiceCoreModule } from '@deals/runtime';
import { LOG_SERIALIZERS } from '@deals/wire';
import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';

/**
 * The worker process of the distributed mode: keeps the views up to date and runs scheduled jobs.
 * Stateless; as many replicas as needed (projection writes are idempotent).
 */
@Module({})
export class WorkerModule {
  static forRoot(config: ServiceConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ServiceCoreModule.forRoot({ config: { ...config, runProjections: true }, role: 'worker' }),
        // Errors logged without the fields in which a database quotes data, as the API's are.
        LoggerModule.forRoot({ pinoHttp: { level: config.logLevel, serializers: LOG_SERIALIZERS } }),
      ],
    };
  }
}
