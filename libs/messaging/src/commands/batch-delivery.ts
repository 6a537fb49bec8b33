import { AccountQueries } from '@deals/accounts';
import { CatalogQueries, effectiveStateAt } from '@deals/catalog';
import {
  Clock,
  CommandContext,
  EventStore,
  handleCommand,
  KeyedMutex,
  loadAggregate,
  loadCachedAggregate,
  MailNotSent,
  OPERATOR,
  ScheduledJob,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { UserMail } from '../sandbox-mail/user-mail';
import { setTimeout as sleep } from 'node:timers/promises';
import { batchDayDecider } from '../domain/batch/batch-day.decider';
import { batchDayStream, batchDeliveryStream } from '../domain/batch/batch.events';
import { batchDeliveryDecider, RecordRecipient } from '../domain/batch/batch-delivery.decider';
import { dealEmail } from '../email/deal-email';
import { DealSummaries } from '../email/deal-summaries';

export const DELIVER_BATCH_JOB = 'deliver-batch';

/** The job that delivers a batch at its `send_at`. */
export const deliveryJob = (batchId: string, partnerId: string, sendDay: string, sendAt: Date): ScheduledJob => ({
  id: `deliver-batch-${batchId}`,
  kind: DELIVER_BATCH_JOB,
  runAt: sendAt,
  data: { batchId, partnerId, sendDay },
});

/** Messages in flight at once (the SMTP pool keeps 5 connections). */
const IN_FLIGHT = 10;
/** Tries of one recipient on temporary failures (4xx, a connection lost), with doubling waits from {@link RETRY_MS}. */
export const MAIL_ATTEMPTS = 3;
const RETRY_MS = 500;

/** The outcome of a delivery run: `early` when `send_at` has not come yet on this clock. */
export type DeliveryRun = { outcome: 'nothing' | 'delivered' } | { outcome: 'early'; sendAt: string };

/**
 * Delivers a batch at `send_at`: marks it sending on its day stream (from then it is not
 * cancelled; a cancelled batch is never sent), then emails each of its users still live, recording
 * every recipient's outcome as an event, and finally the batch's status. A run that stopped half-way
 * (a crash) resumes with the users not yet recorded: only the one whose message was under way may
 * get it twice (its Message-ID is the same). Temporary refusals are tried again, {@link MAIL_ATTEMPTS}
 * times in all.
 */
@Injectable()
export class BatchDelivery {
  private readonly logger = new Logger('BatchDelivery');
  private readonly running = new KeyedMutex();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly mail: UserMail,
    private readonly accounts: AccountQueries,
    private readonly catalog: CatalogQueries,
    private readonly summaries: DealSummaries,
  ) {}

  deliver(batchId: string, partnerId: string, sendDay: string): Promise<DeliveryRun> {
    return this.running.run(batchId, () => this.run(batchId, partnerId, sendDay));
  }

  private async run(batchId: string, partnerId: string, sendDay: string): Promise<DeliveryRun> {
    const now = this.clock.now();
    const context: CommandContext = { now, metadata: { ...OPERATOR, partnerId } };
    const dayStream = batchDayStream(partnerId, sendDay);
    const batch = (await loadCachedAggregate(this.store, dayStream, batchDayDecider)).state.batches.get(batchId);
    if (!batch || batch.status === 'cancelled') return { outcome: 'nothing' };
    if (Date.parse(batch.terms.sendAt) > now.getTime()) return { outcome: 'early', sendAt: batch.terms.sendAt };
    const started = await handleCommand(this.store, dayStream, batchDayDecider, { type: 'StartSendingBatch', data: { batchId } }, context);
    if (started.state.batches.get(batchId)?.status !== 'sending') return { outcome: 'nothing' };
    const stream = batchDeliveryStream(batchId);
    const delivery = (await loadAggregate(this.store, stream, batchDeliveryDecider)).state;
    if (delivery.status !== 'delivering') return { outcome: 'nothing' };
    // A deal no longer on sale (paused, cancelled, ended since) is not advertised: its recipients are skipped.
    const deal = await this.catalog.deal(batch.terms.dealId);
    const state = deal ? effectiveStateAt(deal.state, deal.startAt!, deal.endAt!, now.getTime()) : null;
    const summary = deal && (state === 'in-flight' || state === 'approved') ? await this.summaries.of(deal, now) : null;
    const todo = batch.terms.userIds.filter((id) => !delivery.tried.has(id));
    const record = (data: RecordRecipient['data']) =>
      handleCommand(this.store, stream, batchDeliveryDecider, { type: 'RecordRecipient', data }, { ...context, now: this.clock.now() });
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < todo.length; i = next++) {
        const userId = todo[i];
        const user = await this.accounts.user(partnerId, userId);
        if (!user || !summary) {
          await record({
            batchId,
            userId,
            outcome: 'skipped',
            reason: user ? `the deal is not on sale (${state ?? 'unknown'})` : 'the user was deleted',
          });
          continue;
        }
        const messageId = `<batch-${batchId}.${userId}@deals-service>`;
        const sent = await this.sendWithRetries(partnerId, userId, dealEmail(summary, user.profile.email, messageId));
        await record(
          sent.ok
            ? { batchId, userId, outcome: 'sent', messageId }
            : { batchId, userId, outcome: 'failed', reason: sent.reason, permanent: sent.permanent, attempts: sent.attempts },
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, todo.length) }, worker));
    const finished = await handleCommand(
      this.store,
      stream,
      batchDeliveryDecider,
      { type: 'FinishDelivery', data: { batchId } },
      {
        ...context,
        now: this.clock.now(),
      },
    );
    this.logger.log(
      `batch ${batchId}: ${finished.state.status} (${finished.state.sent} sent, ${finished.state.failed} failed, ${finished.state.skipped} skipped)`,
    );
    return { outcome: 'delivered' };
  }

  private async sendWithRetries(
    partnerId: string,
    userId: string,
    email: ReturnType<typeof dealEmail>,
  ): Promise<{ ok: true } | { ok: false; reason: string; permanent: boolean; attempts: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.mail.send(partnerId, userId, email);
        return { ok: true };
      } catch (error) {
        const refusal = error instanceof MailNotSent ? error : new MailNotSent((error as Error).message, false);
        if (refusal.permanent || attempt >= MAIL_ATTEMPTS)
          return { ok: false, reason: refusal.message, permanent: refusal.permanent, attempts: attempt };
        await sleep(RETRY_MS * 2 ** (attempt - 1));
      }
    }
  }
}
