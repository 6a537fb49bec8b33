import { CatalogQueries } from '@deals/catalog';
import { Clock, EventStore, Scheduler } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { DailyDigest, digestJob, SEND_DIGEST_JOB } from '../commands/daily-digest';
import { digestStream } from '../domain/digest/digest.decider';
import { localDate, localHourInstant, nextDate } from '../domain/digest/local-time';

/** The hour of the daily email, local to each region (`DIGEST_HOUR`). */
export abstract class DigestSettings {
  abstract readonly hour: number;
}

const ARM_DIGESTS_JOB = 'arm-digests';
const HOUR_MS = 3_600_000;

/**
 * One job per region per local day, at the configured local hour, each run arming the next day's;
 * armed again for every active region when a job-running process starts, and every hour after
 * (a region imported meanwhile gets its jobs too). A region whose hour passed while the service was
 * down gets that day's email at the start, unless some of it went out already.
 */
@Injectable()
export class DailyDigestJobs {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly digest: DailyDigest,
    private readonly catalog: CatalogQueries,
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly settings: DigestSettings,
  ) {
    this.scheduler.handle(SEND_DIGEST_JOB, async (job) => {
      const regionId = String(job.data.regionId);
      const day = String(job.data.day);
      const region = await this.catalog.region(regionId);
      if (!region) return;
      const at = localHourInstant(day, this.settings.hour, region.region.time_zone);
      if (at.getTime() > this.clock.now().getTime())
        throw new Error(`the daily email of ${regionId} for ${day} is due at ${at.toISOString()}: its job ran early`);
      await this.digest.send(regionId, day, this.settings.hour);
      const tomorrow = nextDate(day);
      await this.scheduler.schedule(digestJob(regionId, tomorrow, localHourInstant(tomorrow, this.settings.hour, region.region.time_zone)));
    });
    this.scheduler.handle(ARM_DIGESTS_JOB, () => this.rearm());
  }

  async rearm(): Promise<void> {
    const now = this.clock.now();
    for (const view of await this.catalog.regions()) {
      if (!view.region.active) continue;
      const zone = view.region.time_zone;
      let day = localDate(now, zone);
      let at = localHourInstant(day, this.settings.hour, zone);
      if (at.getTime() <= now.getTime() && (await this.store.readStream(digestStream(view._id, day), 0)).length) {
        day = nextDate(day);
        at = localHourInstant(day, this.settings.hour, zone);
      }
      await this.scheduler.schedule(digestJob(view._id, day, at));
    }
    await this.scheduler.schedule({ id: ARM_DIGESTS_JOB, kind: ARM_DIGESTS_JOB, runAt: new Date(now.getTime() + HOUR_MS), data: {} });
  }
}
