import { ServiceCoreModule, ServiceConfig } from '@deals/runtime';
import { DynamicModule, Module } from '@nestjs/common';
import { DealsImportCommand, DealsTransitionCommand, RegionsImportCommand } from './commands/catalogue-import.commands';
import { PartnersCreateCommand } from './commands/partners-create.command';
import { AuditPurchaseCommand } from './commands/audit-purchase.command';
import { ProjectionsRebuildCommand, ProjectionsStatusCommand } from './commands/projections.commands';

/**
 * The operator CLI: the shared core without HTTP, projection runners or job processing, so that it
 * exits as soon as its command is done (libraries.md 6.5).
 */
@Module({})
export class CliModule {
  static forRoot(config: ServiceConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [ServiceCoreModule.forRoot({ config, role: 'cli' })],
      providers: [
        AuditPurchaseCommand,
        PartnersCreateCommand,
        RegionsImportCommand,
        DealsImportCommand,
        DealsTransitionCommand,
        ProjectionsStatusCommand,
        ProjectionsRebuildCommand,
      ],
    };
  }
}
