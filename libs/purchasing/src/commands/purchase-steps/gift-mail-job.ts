import { ScheduledJob, Scheduler } from '@deals/kernel';
import { Logger } from '@nestjs/common';
import type { PurchaseGift } from '../../domain/purchase/purchase.events';

/** The job that mails a gift to its recipient at its delivery time (its handler is messaging's, which sends mail). */
export const MAIL_GIFT_JOB = 'mail-gift';
export const giftMailJob = (purchaseId: string, partnerId: string, at: Date): ScheduledJob => ({
  id: `${MAIL_GIFT_JOB}-${purchaseId}`,
  kind: MAIL_GIFT_JOB,
  runAt: at,
  data: { purchaseId, partnerId },
});

const logger = new Logger('Purchase');

/**
 * Arms a sold gift's mail at its time (`soldAt`: a gift without one), whichever run sold it: the
 * purchase's own, or the settling of one whose charge had no answer. One not armed (a scheduler
 * that failed) is armed again by its mailer, at a start and hourly (the view shows it due).
 */
export async function armGiftMail(
  scheduler: Scheduler,
  purchaseId: string,
  partnerId: string,
  gift: Pick<PurchaseGift, 'deliverAt'>,
  soldAt: Date,
): Promise<void> {
  const at = gift.deliverAt === null ? soldAt : new Date(gift.deliverAt);
  await scheduler
    .schedule(giftMailJob(purchaseId, partnerId, at))
    .catch((error: unknown) => logger.warn(`purchase ${purchaseId}: its gift's mail is not armed yet (${String(error)})`));
}
