import { CommandCaller, EventStore, handleCommand, PaymentGateway } from '@deals/kernel';
import { purchaseDecider } from '../domain/purchase/purchase.decider';
import { purchaseStream } from '../domain/purchase/purchase.events';

/** The refund's idempotency key: one refund per purchase, whoever asks and however often. */
export const refundKey = (purchaseId: string) => `${purchaseId}-refund`;

export const SOLD_OUT_DURING_CHARGE = 'sold out during the charge; the charge was refunded';

/**
 * A charge whose units could not be sold (the hold lapsed and the deal sold out meanwhile): refund
 * it, then record the purchase as not paid. The refund goes first so that no purchase is closed
 * with money kept; a crash between the two leaves a reserved purchase with an approved charge,
 * which recovery finds refunded (`refundOutcome`) and closes without selling.
 */
export async function refundUnfulfilledCharge(
  store: EventStore,
  gateway: PaymentGateway,
  purchase: { purchaseId: string; partnerId: string; chargeId: string; amountCents: number },
  context: { now: Date; metadata: CommandCaller },
): Promise<void> {
  const { purchaseId, partnerId, chargeId, amountCents } = purchase;
  const refund = await gateway.refund({ chargeId, amountCents, idempotencyKey: refundKey(purchaseId) });
  if (refund.status !== 'refunded')
    throw new Error(`purchase ${purchaseId}: the refund of its unfulfilled charge failed (${refund.reason})`);
  await handleCommand(
    store,
    purchaseStream(purchaseId),
    purchaseDecider,
    {
      type: 'RecordNonPayment',
      data: { purchaseId, partnerId, outcome: 'error', reason: SOLD_OUT_DURING_CHARGE },
    },
    context,
  );
}
