import type { ChargeArgs, ChargeRow, RefundArgs, RefundRow, StoredCard, VaultRecord } from './payment-vault.writes';

/**
 * Where the simulated processor keeps its cards (token, test behaviour, brand, last four digits),
 * charges and refunds. A charge or refund is written once per idempotency key: asked again under
 * its key, it answers its first record, however many processes ask at once.
 */
export interface PaymentVault {
  storeCard(card: StoredCard): Promise<void>;
  charge(args: ChargeArgs): Promise<VaultRecord<ChargeRow>>;
  refund(args: RefundArgs): Promise<VaultRecord<RefundRow>>;
  chargeByKey(idempotencyKey: string): Promise<ChargeRow | null>;
  refundByKey(idempotencyKey: string): Promise<RefundRow | null>;
  /** Readies what the first charge would otherwise wait for. */
  warmUp(): void;
  close(): Promise<void>;
}
