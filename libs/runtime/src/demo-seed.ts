import { CreatePartner, sandboxCredentialsJson } from '@deals/accounts';
import { Clock, EventStore, OPERATOR } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { join } from 'node:path';
import { CatalogueImport } from './catalogue-import';
import { demoDeals, demoRegions } from './demo/demo-catalogue';
import { ServiceConfig } from './service-config';
import { underFolderLock, writeWhole } from './shared-folder';

/**
 * On the first start (an empty log) loads the demo catalogue and creates a demo partner, whose
 * credentials are written to `<DATA_DIR>/demo-partner.json` (a log line names the file; the
 * secrets stay out of the log). Processes started together on one data folder and one log seed it
 * once: under a lock in the folder, each looks at the log again once it holds it.
 */
@Injectable()
export class DemoSeed {
  private readonly logger = new Logger('DemoSeed');

  constructor(
    private readonly store: EventStore,
    private readonly commands: CommandBus,
    private readonly catalogue: CatalogueImport,
    private readonly clock: Clock,
    private readonly config: ServiceConfig,
  ) {}

  async seedIfEmpty(): Promise<boolean> {
    if (!this.config.demoData || (await this.store.head()) !== null) return false;
    return underFolderLock(join(this.config.dataDir, '.demo-seed.lock'), async () => (await this.store.head()) === null && this.seed());
  }

  private async seed(): Promise<true> {
    const started = Date.now();
    const partner = await this.commands.execute(new CreatePartner('Demo partner', 'partner', OPERATOR));
    const regions = await this.catalogue.regions(demoRegions(), OPERATOR);
    const deals = await this.catalogue.deals(demoDeals(this.clock.now()), OPERATOR);
    const failed = [...regions.outcomes, ...deals.outcomes].filter((o) => !o.ok);
    if (failed.length) throw new Error(`demo catalogue refused: ${JSON.stringify(failed.slice(0, 3))}`);
    const file = join(this.config.dataDir, 'demo-partner.json');
    const credentials = {
      partner_id: partner.partnerId,
      name: partner.name,
      api_key: partner.apiKey,
      username: partner.username,
      password: partner.password,
      test: partner.sandbox && sandboxCredentialsJson(partner.sandbox),
    };
    writeWhole(file, `${JSON.stringify(credentials, null, 2)}\n`, 0o600);
    this.logger.log(
      { regions: regions.outcomes.length, deals: deals.outcomes.length, ms: Date.now() - started },
      `demo catalogue loaded: ${regions.outcomes.length} regions, ${deals.outcomes.length} deals`,
    );
    // The secrets stay out of the log (which may be shipped elsewhere): the line names the file.
    this.logger.log({ partnerId: partner.partnerId, file }, `demo partner created: its live and test credentials are in ${file}`);
    return true;
  }
}
