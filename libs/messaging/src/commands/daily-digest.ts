import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import { EngagementQueries, UnsubscribeLinks } from '@deals/engagement';
import {
  Clock,
  currentTestClock,
  EventStore,
  handleCommand,
  KeyedMutex,
  keepsTimeOf,
  loadAggregate,
  MailNotSent,
  OPERATOR,
  sandboxScoped,
  ScheduledJob,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { UserMail } from '../sandbox-mail/user-mail';
import { utcDay } from '../domain/batch/batch-rules';
import { digestDecider, digestStream, RecordDigestRecipient } from '../domain/digest/digest.decider';
import { localHourInstant } from '../domain/digest/local-time';
import { digestEmail } from '../email/deal-email';
import { DealSummaries } from '../email/deal-summaries';
import { BatchQueries } from '../queries/batch.queries';

export const SEND_DIGEST_JOB = 'send-digest';
/** Deals one daily email shows at most. */
const DEALS_PER_DIGEST = 10;
const IN_FLIGHT = 10;

/** The job of one region's daily email of one local day, at the configured local hour. */
export const digestJob = (regionId: string, day: string, runAt: Date): ScheduledJob => ({
  id: `send-digest-${regionId}-${day}`,
  kind: SEND_DIGEST_JOB,
  runAt,
  data: { regionId, day },
});

export interface DigestRun {
  sent: number;
  skipped: number;
  failed: number;
}

/**
 * The daily regional email (docs/decisions.md "Daily regional email"): every active subscription of
 * the region gets the region's deals on sale, except users that a `suppress` batch of that UTC day
 * names; each recipient's outcome is an event on the region's day stream, so no one gets two the
 * same day, also after a crash (the one under way aside). No deals on sale: no email.
 */
@Injectable()
export class DailyDigest {
  private readonly logger = new Logger('DailyDigest');
  private readonly running = new KeyedMutex();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly mail: UserMail,
    private readonly catalog: CatalogQueries,
    private readonly subscriptions: EngagementQueries,
    private readonly accounts: AccountQueries,
    private readonly batches: BatchQueries,
    private readonly summaries: DealSummaries,
    private readonly unsubscribe: UnsubscribeLinks,
  ) {}

  /** Sends one region's email of local day `day` (the CLI's `mail:digest` gives today's), to those not yet tried. */
  send(regionId: string, day: string, hour: number): Promise<DigestRun> {
    // A test clock's world keeps the record of its own emails apart from the real day's.
    const stream = sandboxScoped(digestStream(regionId, day), currentTestClock()?.partnerId);
    // One run of a region's day at a time in this process: a run started while another sends (a job
    // re-armed at a start or on the hour) would find its recipients not yet recorded and send again.
    return this.running.run(stream, () => this.sendOnce(regionId, day, hour, stream));
  }

  private async sendOnce(regionId: string, day: string, hour: number, stream: string): Promise<DigestRun> {
    const run: DigestRun = { sent: 0, skipped: 0, failed: 0 };
    const region = await this.catalog.region(regionId);
    if (!region) return run;
    const tried = (await loadAggregate(this.store, stream, digestDecider)).state.tried;
    // Under a test clock, its own subscriptions; otherwise every other one.
    const todo = (await this.subscriptions.activeInRegion(regionId)).filter((s) => !tried.has(s._id) && keepsTimeOf(s.partnerId));
    // No one left to write to (a region without subscribers, a day done): no search of the
    // catalogue, which a job re-armed at every start and every hour would otherwise run for nothing.
    if (!todo.length) return run;
    const now = this.clock.now();
    const deals = await this.catalog.onSaleInRegion(regionId, now.getTime(), DEALS_PER_DIGEST);
    if (!deals.length) {
      this.logger.log(`daily email of ${regionId} for ${day}: no deals on sale, none sent`);
      return run;
    }
    const summaries = await Promise.all(deals.map((deal) => this.summaries.of(deal, now)));
    // "A user in a suppress batch whose send_at falls that UTC day": the UTC day of the email's hour.
    const suppressed = await this.batches.suppressedOn(utcDay(localHourInstant(day, hour, region.region.time_zone)));
    const record = async (data: RecordDigestRecipient['data']) => {
      await handleCommand(
        this.store,
        stream,
        digestDecider,
        { type: 'RecordDigestRecipient', data },
        {
          now: this.clock.now(),
          metadata: { ...OPERATOR, partnerId: data.partnerId },
        },
      );
      run[data.outcome === 'sent' ? 'sent' : data.outcome === 'skipped' ? 'skipped' : 'failed'] += 1;
    };
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < todo.length; i = next++) {
        const s = todo[i];
        const base = { regionId, day, subscriptionId: s._id, partnerId: s.partnerId, userId: s.userId };
        const user = await this.accounts.user(s.partnerId, s.userId);
        if (!user) {
          await record({ ...base, outcome: 'skipped', reason: 'the user was deleted', messageId: null });
          continue;
        }
        if (suppressed.has(s.userId)) {
          await record({ ...base, outcome: 'skipped', reason: 'a suppress batch of that day', messageId: null });
          continue;
        }
        const messageId = `<digest-${regionId}-${day}.${s._id}@deals-service>`;
        try {
          const email = digestEmail(region.region.name, summaries, user.profile.email, messageId, this.unsubscribe.urlOf(s._id));
          await this.mail.send(s.partnerId, s.userId, email);
          await record({ ...base, outcome: 'sent', reason: null, messageId });
        } catch (error) {
          const reason = error instanceof MailNotSent ? error.message : String(error);
          await record({ ...base, outcome: 'failed', reason, messageId });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, todo.length) }, worker));
    this.logger.log(`daily email of ${regionId} for ${day}: ${run.sent} sent, ${run.skipped} skipped, ${run.failed} failed`);
    return run;
  }
}
