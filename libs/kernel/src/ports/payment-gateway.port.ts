/** A card as entered, handed to the processor once to be exchanged for a token. Never stored or logged. */
export interface CardDetails {
  /** 16 digits; spaces and dashes are allowed and ignored. */
  number: string;
  /** The security code, used only at tokenisation. */
  cvv: string;
  month: number;
  year: number;
  zip: string;
}

/**
 * The card numbers published for testing (the usual convention): a sandbox takes only these, and
 * a live installation taking real money refuses them. The simulated processor gives each its
 * behaviour (the first four approve).
 */
export const TEST_CARD_NUMBERS: readonly string[] = [
  '4242424242424242',
  '4111111111111111',
  '5555555555554444',
  '5105105105105100',
  '4000000000000002',
  '4000000000000119',
  '4000000000000259',
  '4000000000005126',
  '4000000000007726',
];

/** What the service may keep of a card. */
export interface TokenizedCard {
  /** Stands for the card in later charges; meaningless outside this processor. */
  token: string;
  /** Brand name, e.g. `Visa`, `MasterCard`. */
  brand: string;
  last4: string;
  /**
   * The same for the same card number, whoever stores it and however often; different for
   * different numbers. Reveals nothing about the number without the installation's secret, and
   * is slow to compute, so guessing numbers against a leaked fingerprint is impractical.
   */
  fingerprint: string;
}

export interface ChargeRequest {
  token: string;
  /** A positive whole number of cents. */
  amountCents: number;
  /** Chosen by the caller, e.g. the purchase id; a retry must reuse it. */
  idempotencyKey: string;
  /** Shown on the statement; must not hold card data. */
  description: string;
}

export type ChargeOutcome =
  { status: 'approved'; chargeId: string } | { status: 'declined'; reason: string } | { status: 'error'; reason: string };

export interface RefundRequest {
  chargeId: string;
  /** A positive whole number of cents, at most what is left of the charge. */
  amountCents: number;
  idempotencyKey: string;
}

export type RefundOutcome =
  { status: 'refunded'; refundId: string } | { status: 'refused'; reason: string } | { status: 'error'; reason: string };

/** The processor would not tokenise the card (number malformed, brand not taken). Holds no card data. */
export class CardRejected extends Error {
  constructor(readonly reason: string) {
    super(`card rejected: ${reason}`);
    this.name = 'CardRejected';
  }
}

/**
 * Takes card payments through a processor.
 *
 * Promises: `tokenize` exchanges a card for a token and rejects with {@link CardRejected} when
 * the processor will not take it; the CVV is used only there and never kept, the number is kept
 * only by the processor, and neither appears in an error, a result or a log line. `charge` and
 * `refund` are idempotent by key: a repeated key returns the outcome of its first call without
 * moving money again, even across restarts; a key reused with other parameters gets an `error`
 * outcome. A `declined` charge is final for that key; an `error` is the processor's failure and
 * may succeed under a new key. Both reject (rather than answer) only for a malformed request.
 *
 * Leaves out: validating what a person typed (the card rules in accounts run first), address
 * verification, authorisation holds separate from capture, currencies other than USD.
 */
export abstract class PaymentGateway {
  abstract readonly backend: string;

  abstract tokenize(card: CardDetails): Promise<TokenizedCard>;

  /** Starts what the first charge would start (the simulated processor's write thread): a serving process calls it as it starts. */
  warmUp(): void {}

  abstract charge(request: ChargeRequest): Promise<ChargeOutcome>;

  abstract refund(request: RefundRequest): Promise<RefundOutcome>;

  /**
   * The outcome recorded for a charge's idempotency key, or null when no charge was ever made
   * under it. Moves no money: recovery after a crash asks this instead of charging again.
   */
  abstract chargeOutcome(idempotencyKey: string): Promise<ChargeOutcome | null>;

  /** The outcome recorded for a refund's idempotency key, or null when none was asked. Moves no money. */
  abstract refundOutcome(idempotencyKey: string): Promise<RefundOutcome | null>;

  abstract close(): Promise<void>;
}
