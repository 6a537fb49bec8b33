import { Scheduler } from '@deals/kernel';
import { Logger } from '@nestjs/common';

/** The scheduled job that settles a card purchase whose charge has no known outcome. */
export const RECOVER_PURCHASE_JOB = 'recover-purchase';

/** Its id: one per purchase, and one per later attempt. */
const recoverPurchaseJobId = (purchaseId: string, attempt = 0) =>
  attempt === 0 ? `recover-purchase-${purchaseId}` : `recover-purchase-${purchaseId}-${attempt}`;

/** How long a failed settling waits before its next attempt: a minute, doubling, at most half an hour. */
export const recoveryRetryDelayMs = (attempt: number) => Math.min(60_000 * 2 ** Math.max(0, attempt - 1), 30 * 60_000);

const logger = new Logger('PurchaseRecovery');

/**
 * Arms the settling of a purchase at `runAt`, from what the processor recorded under its
 * idempotency key. A scheduler that fails is logged: start-up recovery settles the purchase then.
 */
export async function armPurchaseRecovery(scheduler: Scheduler, purchaseId: string, runAt: Date, attempt = 0): Promise<boolean> {
  try {
    await scheduler.schedule({
      id: recoverPurchaseJobId(purchaseId, attempt),
      kind: RECOVER_PURCHASE_JOB,
      runAt,
      data: { purchaseId, attempt },
    });
    return true;
  } catch (error) {
    logger.error(`purchase ${purchaseId}: its settling job was not armed (${(error as Error).message}); start-up recovery settles it`);
    return false;
  }
}
