/**
 * The simulated processor's writes, run by its vault's write thread (see {@link SqliteWriteThread})
 * in group transactions. Loaded by path in the worker: relative imports only. Ids are made by the
 * caller, so these stay plain records keyed by idempotency key.
 */
import type Database from 'better-sqlite3';

/**
 * A test card's behaviour: its charges approved, declined, failed or answered slowly; or approved,
 * with refunds the issuer refuses (`refund_refused`) or whose first answer is lost although the
 * money went back (`refund_late`: asked again under its key, the refund answers refunded).
 */
export type Behaviour = 'approve' | 'decline' | 'processor_error' | 'slow' | 'refund_refused' | 'refund_late';
export const BEHAVIOURS: readonly Behaviour[] = ['approve', 'decline', 'processor_error', 'slow', 'refund_refused', 'refund_late'];

export const VAULT_SCHEMA = `
  CREATE TABLE IF NOT EXISTS cards (
    token TEXT PRIMARY KEY, behaviour TEXT NOT NULL, brand TEXT NOT NULL, last4 TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS charges (
    idempotency_key TEXT PRIMARY KEY, token TEXT NOT NULL, amount_cents INTEGER NOT NULL,
    status TEXT NOT NULL, charge_id TEXT UNIQUE, reason TEXT);
  CREATE TABLE IF NOT EXISTS refunds (
    idempotency_key TEXT PRIMARY KEY, charge_id TEXT NOT NULL, amount_cents INTEGER NOT NULL,
    status TEXT NOT NULL, refund_id TEXT UNIQUE, reason TEXT);
  CREATE INDEX IF NOT EXISTS refunds_by_charge ON refunds (charge_id);
`;

export interface ChargeRow {
  idempotency_key: string;
  token: string;
  amount_cents: number;
  status: 'approved' | 'declined' | 'error';
  charge_id: string | null;
  reason: string | null;
}

export interface RefundRow {
  idempotency_key: string;
  charge_id: string;
  amount_cents: number;
  status: 'refunded' | 'refused' | 'error';
  refund_id: string | null;
  reason: string | null;
}

/** A tokenized card as the vault keeps it: no number, no security code. */
export interface StoredCard {
  token: string;
  behaviour: Behaviour;
  brand: string;
  last4: string;
}

/** A charge's or a refund's record under its key, its card's test behaviour, and whether this call made it. */
export interface VaultRecord<Row> {
  row: Row;
  behaviour: Behaviour | null;
  first: boolean;
}

export interface ChargeArgs {
  token: string;
  amountCents: number;
  idempotencyKey: string;
  /** The id an approval gets, made by the caller. */
  newChargeId: string;
}

export interface RefundArgs {
  chargeId: string;
  amountCents: number;
  idempotencyKey: string;
  newRefundId: string;
}

/** The outcome a new charge gets from its card's test behaviour (null: the token is unknown). */
export function chargeDecision(behaviour: Behaviour | null, newChargeId: string): [ChargeRow['status'], string | null, string | null] {
  return behaviour === null
    ? ['error', null, 'unknown card token']
    : behaviour === 'decline'
      ? ['declined', null, 'card declined']
      : behaviour === 'processor_error'
        ? ['error', null, 'processor error']
        : ['approved', newChargeId, null];
}

/**
 * The outcome a new refund gets: refused for an unknown (or not approved) charge, beyond what is
 * left of it after the refunds already made, or for the card whose issuer refuses refunds.
 */
export function refundDecision(
  charge: { charged: number; behaviour: Behaviour | null } | undefined,
  alreadyRefunded: number,
  amountCents: number,
  newRefundId: string,
): [RefundRow['status'], string | null, string | null] {
  return charge === undefined
    ? ['refused', null, 'unknown charge']
    : amountCents > charge.charged - alreadyRefunded
      ? ['refused', null, 'refund exceeds what is left of the charge']
      : charge.behaviour === 'refund_refused'
        ? ['refused', null, "the card's issuer refused the refund"]
        : ['refunded', newRefundId, null];
}

export function prepareWrites(db: Database.Database) {
  const insertCard = db.prepare('INSERT INTO cards (token, behaviour, brand, last4) VALUES (?, ?, ?, ?)');
  const cardBehaviour = db.prepare('SELECT behaviour FROM cards WHERE token = ?').pluck();
  const chargeByKey = db.prepare('SELECT * FROM charges WHERE idempotency_key = ?');
  const insertCharge = db.prepare(
    'INSERT INTO charges (idempotency_key, token, amount_cents, status, charge_id, reason) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const refundByKey = db.prepare('SELECT * FROM refunds WHERE idempotency_key = ?');
  const approvedCharge = db.prepare(
    "SELECT charges.amount_cents AS charged, cards.behaviour FROM charges LEFT JOIN cards ON cards.token = charges.token WHERE charge_id = ? AND status = 'approved'",
  );
  const refunded = db.prepare("SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE charge_id = ? AND status = 'refunded'").pluck();
  const insertRefund = db.prepare(
    'INSERT INTO refunds (idempotency_key, charge_id, amount_cents, status, refund_id, reason) VALUES (?, ?, ?, ?, ?, ?)',
  );
  return {
    storeCard({ token, behaviour, brand, last4 }: StoredCard): null {
      insertCard.run(token, behaviour, brand, last4);
      return null;
    },

    /** The first record of the key, or a new one decided from the card's test behaviour. */
    charge({ token, amountCents, idempotencyKey, newChargeId }: ChargeArgs): VaultRecord<ChargeRow> {
      const behaviour = (cardBehaviour.get(token) as Behaviour | undefined) ?? null;
      const earlier = chargeByKey.get(idempotencyKey) as ChargeRow | undefined;
      if (earlier) return { row: earlier, behaviour, first: false };
      const [status, chargeId, reason] = chargeDecision(behaviour, newChargeId);
      insertCharge.run(idempotencyKey, token, amountCents, status, chargeId, reason);
      return {
        row: { idempotency_key: idempotencyKey, token, amount_cents: amountCents, status, charge_id: chargeId, reason },
        behaviour,
        first: true,
      };
    },

    /** The first record of the key, or a new one decided from the charge and its card's test behaviour. */
    refund({ chargeId, amountCents, idempotencyKey, newRefundId }: RefundArgs): VaultRecord<RefundRow> {
      const charge = approvedCharge.get(chargeId) as { charged: number; behaviour: Behaviour | null } | undefined;
      const behaviour = charge?.behaviour ?? null;
      const earlier = refundByKey.get(idempotencyKey) as RefundRow | undefined;
      if (earlier) return { row: earlier, behaviour, first: false };
      const [status, refundId, reason] = refundDecision(charge, refunded.get(chargeId) as number, amountCents, newRefundId);
      insertRefund.run(idempotencyKey, chargeId, amountCents, status, refundId, reason);
      return {
        row: { idempotency_key: idempotencyKey, charge_id: chargeId, amount_cents: amountCents, status, refund_id: refundId, reason },
        behaviour,
        first: true,
      };
    },
  };
}
