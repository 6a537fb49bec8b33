import { CatalogQueries } from '@deals/catalog';
import { Clock } from '@deals/kernel';
import { DailyDigest, DigestSettings, localDate } from '@deals/messaging';
import { Command, CommandRunner } from 'nest-commander';

@Command({
  name: 'mail:digest',
  arguments: '<region_id>',
  description: "send a region's daily email of today (its local date) now, to every active subscription not yet sent it today",
})
export class MailDigestCommand extends CommandRunner {
  constructor(
    private readonly digest: DailyDigest,
    private readonly catalog: CatalogQueries,
    private readonly clock: Clock,
    private readonly settings: DigestSettings,
  ) {
    super();
  }

  async run([regionId]: string[]): Promise<void> {
    const region = await this.catalog.region(regionId);
    if (!region) {
      process.stderr.write(`no region ${regionId}\n`);
      process.exitCode = 1;
      return;
    }
    const day = localDate(this.clock.now(), region.region.time_zone);
    const run = await this.digest.send(regionId, day, this.settings.hour);
    process.stdout.write(`daily email of ${regionId} for ${day}: ${run.sent} sent, ${run.skipped} skipped, ${run.failed} failed\n`);
  }
}
