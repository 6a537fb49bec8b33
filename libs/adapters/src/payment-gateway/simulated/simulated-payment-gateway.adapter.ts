import {
  CardDetails,
  CardRejected,
  ChargeOutcome,
  ChargeRequest,
  PaymentGateway,
  RefundOutcome,
  RefundRequest,
  slowHashes,
  timeOrderedText,
  TokenizedCard,
} from '@deals/kernel';
import { randomBytes, scrypt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PaymentVault } from './payment-vault';
import { Behaviour, ChargeArgs, ChargeRow, RefundArgs, RefundRow } from './payment-vault.writes';

export interface SimulatedPaymentGatewayOptions {
  /** How long a charge on the slow test card takes; 3 s unless given. */
  slowMs?: number;
  /** The installation's secret for card fingerprints (at least 16 bytes). */
  pepper: Buffer;
}

/** The common test-card convention; every other acceptable number approves. */
export const TEST_CARDS: Record<string, Behaviour> = {
  '4000000000000002': 'decline',
  '4000000000000119': 'processor_error',
  '4000000000000259': 'slow',
  '4000000000005126': 'refund_refused',
  '4000000000007726': 'refund_late',
};

/**
 * 2^14 × 8 × 128 bytes = 16 MiB per computation, under Node's 32 MiB default `maxmem`. Tens of
 * milliseconds per card, once per tokenisation, on the libuv thread pool.
 */
const FINGERPRINT = { N: 2 ** 14, r: 8, p: 1 } as const;
const FINGERPRINT_BYTES = 32;
const DEFAULT_SLOW_MS = 3000;

/**
 * A deterministic stand-in for a card processor. Its vault (a file of the data folder, or tables
 * of the distributed mode's database) maps each token to the card's test behaviour, brand and last
 * four digits; the number and the CVV are checked, fingerprinted and dropped, never written.
 * Charges and refunds are recorded by idempotency key, so a repeated key answers its first outcome
 * across restarts and processes; a charge is answered only once its record is durable.
 */
export class SimulatedPaymentGateway extends PaymentGateway {
  readonly backend = 'simulated';
  private readonly slowMs: number;
  private readonly pepper: Buffer;
  /**
   * Charge and refund ids: the time, then 18 random bytes, drawn a pool at a time (a charge is on
   * every purchase's path); time-ordered, so that the vault's unique index on them grows at one end.
   */
  private readonly newIdText = timeOrderedText(18);

  constructor(
    private readonly vault: PaymentVault,
    options: SimulatedPaymentGatewayOptions,
  ) {
    super();
    if (!Buffer.isBuffer(options.pepper) || options.pepper.length < 16) {
      throw new Error('the fingerprint pepper must be a secret of at least 16 bytes');
    }
    this.pepper = Buffer.from(options.pepper);
    this.slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
  }

  override warmUp(): void {
    this.vault.warmUp();
  }

  async tokenize(card: CardDetails): Promise<TokenizedCard> {
    const number = typeof card.number === 'string' ? card.number.replace(/[\s-]+/g, '') : '';
    if (!/^\d{16}$/.test(number) || !passesLuhn(number)) throw new CardRejected('the number is not a valid 16-digit card number');
    const brand = brandOf(number);
    if (brand === null) throw new CardRejected('the card brand is not accepted');
    if (typeof card.cvv !== 'string' || !/^\d{3}$/.test(card.cvv.trim())) throw new CardRejected('the security code must be 3 digits');
    const monthOk = Number.isInteger(card.month) && card.month >= 1 && card.month <= 12;
    const yearOk = Number.isInteger(card.year) && card.year >= 1000 && card.year <= 9999;
    if (!monthOk || !yearOk) throw new CardRejected('the expiry date is not valid');
    const fingerprint = await fingerprintOf(number, this.pepper);
    const token = `tok_${randomBytes(24).toString('base64url')}`;
    const last4 = number.slice(-4);
    await this.vault.storeCard({ token, behaviour: TEST_CARDS[number] ?? 'approve', brand, last4 });
    return { token, brand, last4, fingerprint };
  }

  async charge(request: ChargeRequest): Promise<ChargeOutcome> {
    assertRequest(request.idempotencyKey, request.amountCents);
    const { token, amountCents, idempotencyKey } = request;
    const args = { token, amountCents, idempotencyKey, newChargeId: `ch_${this.newIdText()}` } satisfies ChargeArgs;
    const { row, behaviour, first } = await this.vault.charge(args);
    if (!first && (row.token !== token || row.amount_cents !== amountCents)) return keyReused;
    if (behaviour === 'slow') await sleep(this.slowMs);
    return chargeOutcome(row);
  }

  async refund(request: RefundRequest): Promise<RefundOutcome> {
    assertRequest(request.idempotencyKey, request.amountCents);
    const { chargeId, amountCents, idempotencyKey } = request;
    const args = { chargeId, amountCents, idempotencyKey, newRefundId: `re_${this.newIdText()}` } satisfies RefundArgs;
    const { row, behaviour, first } = await this.vault.refund(args);
    if (!first && (row.charge_id !== chargeId || row.amount_cents !== amountCents)) return keyReused;
    // The money went back; the answer to the first asking is lost on its way.
    if (first && behaviour === 'refund_late' && row.status === 'refunded')
      return { status: 'error', reason: 'the processor did not answer in time' };
    return refundOutcome(row);
  }

  async chargeOutcome(idempotencyKey: string): Promise<ChargeOutcome | null> {
    const row = await this.vault.chargeByKey(idempotencyKey);
    return row ? chargeOutcome(row) : null;
  }

  async refundOutcome(idempotencyKey: string): Promise<RefundOutcome | null> {
    const row = await this.vault.refundByKey(idempotencyKey);
    return row ? refundOutcome(row) : null;
  }

  close(): Promise<void> {
    return this.vault.close();
  }
}

const keyReused = { status: 'error', reason: 'idempotency key reused with other parameters' } as const;

const refundOutcome = (row: RefundRow): RefundOutcome =>
  row.status === 'refunded' ? { status: 'refunded', refundId: row.refund_id! } : { status: row.status, reason: row.reason! };

const chargeOutcome = (row: ChargeRow): ChargeOutcome =>
  row.status === 'approved' ? { status: 'approved', chargeId: row.charge_id! } : { status: row.status, reason: row.reason! };

function assertRequest(idempotencyKey: string, amountCents: number): void {
  if (typeof idempotencyKey !== 'string' || idempotencyKey === '') throw new TypeError('an idempotency key is required');
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0) throw new RangeError('amountCents must be a positive whole number');
}

/**
 * Deterministic per installation, and slow, so a leaked fingerprint cannot be matched by trying
 * numbers; in the requests' lane of the slow hashes, so that a flood of cards leaves the partner
 * site's sign-ins their threads.
 */
function fingerprintOf(number: string, pepper: Buffer): Promise<string> {
  return slowHashes.requests.run(
    '',
    () =>
      new Promise((resolve, reject) =>
        scrypt(number, pepper, FINGERPRINT_BYTES, FINGERPRINT, (error, key) => (error ? reject(error) : resolve(key.toString('hex')))),
      ),
  );
}

function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    const d = (digits.charCodeAt(digits.length - 1 - i) - 48) * (i % 2 === 1 ? 2 : 1);
    sum += d > 9 ? d - 9 : d;
  }
  return sum % 10 === 0;
}

/**
 * The processor names the brand itself, as a real one does (adapters import no bounded context);
 * the ranges match accounts' `cardBrand`, which the contract test checks.
 */
function brandOf(number: string): string | null {
  const lead = (n: number) => Number(number.slice(0, n));
  if (number[0] === '4') return 'Visa';
  if ((lead(2) >= 51 && lead(2) <= 55) || (lead(4) >= 2221 && lead(4) <= 2720)) return 'MasterCard';
  if (lead(4) === 6011 || (lead(3) >= 644 && lead(3) <= 649) || lead(2) === 65) return 'Discover';
  if (lead(4) >= 3528 && lead(4) <= 3589) return 'JCB';
  if (lead(2) === 62) return 'UnionPay';
  return null;
}
