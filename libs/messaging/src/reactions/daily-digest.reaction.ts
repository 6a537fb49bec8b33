import { CatalogQueries } from '@deals/catalog';
import { Clock, currentTestClock, EventStore, inTestClock, Scheduler, TestClockRunner } from '@deals/kernel';
import { EngagementQueries } from '@deals/engagement';
import { Injectable } from '@nestjs/common';
import { DailyDigest, digestJob, SEND_DIGEST_JOB } from '../commands/daily-digest';
import { digestStream } from '../domain/digest/digest.decider';
import { localDate, localHourInstant, nextDate } from '../domain/digest/local-time';

/** The hour of the daily email, local to each region (`DIGEST_HOUR`). */
export abstract class DigestSettings {
  abstract readonly hour: number;
}

const ARM_DIGESTS_JOB = 'arm-digests';
const CLOCK_DIGESTS_JOB = 'clock-digests';
/** The days of daily emails one advance of a test clock sends at most: its last ones. */
export const CLOCK_DIGEST_DAYS = 31;
const DAY_MS = 86_400_000;
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
    private readonly subscriptions: EngagementQueries,
    runner: TestClockRunner,
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
    this.scheduler.handle(CLOCK_DIGESTS_JOB, (job) => this.sendUnderClock(new Date(String(job.data.from)), job.runAt));
    runner.sweepAtEachAdvance(CLOCK_DIGESTS_JOB);
  }

  /**
   * Under a test clock, at the end of an advance: each day's email whose hour the advance passed, in
   * each region where the clock's world has subscribers, sent in order at that hour by the clock;
   * of a longer advance, its last {@link CLOCK_DIGEST_DAYS} days' only (one call moving a clock two
   * years must not send each subscriber hundreds of emails).
   */
  private async sendUnderClock(passedFrom: Date, to: Date): Promise<void> {
    const clock = currentTestClock();
    if (!clock) return;
    const from = new Date(Math.max(passedFrom.getTime(), to.getTime() - CLOCK_DIGEST_DAYS * DAY_MS));
    for (const view of await this.catalog.regions()) {
      if (!view.region.active || !(await this.subscriptions.activeInRegion(view._id)).some((s) => s.partnerId === clock.partnerId))
        continue;
      const zone = view.region.time_zone;
      for (let day = localDate(from, zone); ; day = nextDate(day)) {
        const at = localHourInstant(day, this.settings.hour, zone);
        if (at.getTime() > to.getTime()) break;
        if (at.getTime() > from.getTime()) await inTestClock({ ...clock, at }, () => this.digest.send(view._id, day, this.settings.hour));
      }
    }
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
