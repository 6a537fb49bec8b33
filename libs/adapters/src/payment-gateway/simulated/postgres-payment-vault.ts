import { serverUnavailable } from '@deals/kernel';
import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { existsSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, PoolClient } from 'pg';
import { servicePool } from '../../postgres-pool';
import { inTransaction } from '../../postgres-transaction';
import type { PaymentVault } from './payment-vault';
import {
  Behaviour,
  chargeDecision,
  ChargeArgs,
  ChargeRow,
  refundDecision,
  RefundArgs,
  RefundRow,
  StoredCard,
  VaultRecord,
} from './payment-vault.writes';

const SCHEMA = `
CREATE TABLE payment_cards (token text PRIMARY KEY, behaviour text NOT NULL, brand text NOT NULL, last4 text NOT NULL);
CREATE TABLE payment_charges (
  idempotency_key text PRIMARY KEY, token text NOT NULL, amount_cents bigint NOT NULL,
  status text NOT NULL, charge_id text UNIQUE, reason text);
CREATE TABLE payment_refunds (
  idempotency_key text PRIMARY KEY, charge_id text NOT NULL, amount_cents bigint NOT NULL,
  status text NOT NULL, refund_id text UNIQUE, reason text);
CREATE INDEX payment_refunds_by_charge ON payment_refunds (charge_id);
CREATE TABLE payment_vault_copies (file text PRIMARY KEY, signature text NOT NULL, copied_at timestamptz NOT NULL);
`;
const SCHEMA_LOCK = 7216010;
/** The advisory lock space of a charge's refunds: one is decided at a time, against the sum of the others. */
const REFUND_LOCK = 7216011;
/**
 * How long a charge or a refund is made again while the database is away or its answer was lost
 * (each is keyed: made again, it finds the first one or makes it, never a second), and the pause
 * between two tries. A processor's caller waits longer than for a read: an outage the service rides
 * out must not leave a charge in doubt.
 */
const REPEAT_WHILE_AWAY_MS = 15_000;
const REPEAT_PAUSE_MS = 250;
/** How long after its first try a second one is still made (well within the charge lock's 2 minutes, after which a purchase is settled without it). */
const SECOND_TRY_WITHIN_MS = 60_000;
/** Rows copied per statement from a vault file the tables replace. */
const IMPORT_CHUNK = 5_000;

/** pg reads bigint as text: the vault's amounts as numbers (cents, far below 2^53). */
const chargeRow = (row: ChargeRow): ChargeRow => ({ ...row, amount_cents: Number(row.amount_cents) });
const refundRow = (row: RefundRow): RefundRow => ({ ...row, amount_cents: Number(row.amount_cents) });

/**
 * The vault in the PostgreSQL database of the distributed mode (`payment_cards`, `payment_charges`,
 * `payment_refunds`), so that replicas on several machines share it without a shared file, and no
 * process holds it locked past the database's own bounds: a charge is two statements, neither in a
 * transaction; a refund is one short transaction under its charge's lock, ended by the server if
 * its process stops in the middle. Both are made again while the database is away or an answer is
 * lost (see {@link repeatedWhileAway}). A vault file of the data folder (`importFrom`, the earlier
 * versions' store in every mode) is copied into the tables at a process's start whenever it changed
 * since its last copy, so cards stored before keep being charged (and a charge an earlier version's
 * process made meanwhile is found by the next start, said in the log).
 */
export class PostgresPaymentVault implements PaymentVault {
  private readonly pool: Pool;
  private ready: Promise<void> | null = null;
  private readonly logger = new Logger('PaymentVault');

  constructor(
    url: string,
    private readonly importFrom?: string,
  ) {
    this.pool = servicePool(url, 4);
  }

  warmUp(): void {
    // The first charge asks again (and fails with the cause); said here too, once.
    void this.schema().catch((error: unknown) => this.logger.error(`the vault's tables could not be made or filled: ${String(error)}`));
  }

  async storeCard({ token, behaviour, brand, last4 }: StoredCard): Promise<void> {
    await this.schema();
    await this.pool.query('INSERT INTO payment_cards (token, behaviour, brand, last4) VALUES ($1, $2, $3, $4)', [
      token,
      behaviour,
      brand,
      last4,
    ]);
  }

  charge(args: ChargeArgs): Promise<VaultRecord<ChargeRow>> {
    return repeatedWhileAway(() => this.chargeOnce(args));
  }

  refund(args: RefundArgs): Promise<VaultRecord<RefundRow>> {
    return repeatedWhileAway(() => this.refundOnce(args));
  }

  private async chargeOnce({ token, amountCents, idempotencyKey, newChargeId }: ChargeArgs): Promise<VaultRecord<ChargeRow>> {
    await this.schema();
    const {
      rows: [found],
    } = await this.pool.query<{ behaviour: Behaviour | null; earlier: ChargeRow | null }>(
      `SELECT (SELECT behaviour FROM payment_cards WHERE token = $1) AS behaviour,
              (SELECT row_to_json(c) FROM payment_charges c WHERE idempotency_key = $2) AS earlier`,
      [token, idempotencyKey],
    );
    const { behaviour } = found;
    if (found.earlier) return { row: chargeRow(found.earlier), behaviour, first: false };
    const [status, chargeId, reason] = chargeDecision(behaviour, newChargeId);
    const { rows } = await this.pool.query<ChargeRow>(
      `INSERT INTO payment_charges (idempotency_key, token, amount_cents, status, charge_id, reason)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
      [idempotencyKey, token, amountCents, status, chargeId, reason],
    );
    if (rows[0]) return { row: chargeRow(rows[0]), behaviour, first: true };
    // Another process made the key's charge between the two statements: that one is the charge.
    return { row: (await this.chargeByKey(idempotencyKey))!, behaviour, first: false };
  }

  private async refundOnce({ chargeId, amountCents, idempotencyKey, newRefundId }: RefundArgs): Promise<VaultRecord<RefundRow>> {
    await this.schema();
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [REFUND_LOCK, chargeId]);
      const {
        rows: [found],
      } = await client.query<{
        charge: { charged: number; behaviour: Behaviour | null } | null;
        refunded: string;
        earlier: RefundRow | null;
      }>(
        `SELECT (SELECT json_build_object('charged', c.amount_cents, 'behaviour', cards.behaviour)
                   FROM payment_charges c LEFT JOIN payment_cards cards ON cards.token = c.token
                  WHERE c.charge_id = $1 AND c.status = 'approved') AS charge,
                (SELECT coalesce(sum(amount_cents), 0) FROM payment_refunds WHERE charge_id = $1 AND status = 'refunded') AS refunded,
                (SELECT row_to_json(r) FROM payment_refunds r WHERE idempotency_key = $2) AS earlier`,
        [chargeId, idempotencyKey],
      );
      const charge = found.charge ?? undefined;
      const behaviour = charge?.behaviour ?? null;
      if (found.earlier) return { row: refundRow(found.earlier), behaviour, first: false };
      const [status, refundId, reason] = refundDecision(charge, Number(found.refunded), amountCents, newRefundId);
      const { rows } = await client.query<RefundRow>(
        `INSERT INTO payment_refunds (idempotency_key, charge_id, amount_cents, status, refund_id, reason)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
        [idempotencyKey, chargeId, amountCents, status, refundId, reason],
      );
      if (rows[0]) return { row: refundRow(rows[0]), behaviour, first: true };
      // The key's refund, made meanwhile under another charge's lock.
      const { rows: made } = await client.query<RefundRow>('SELECT * FROM payment_refunds WHERE idempotency_key = $1', [idempotencyKey]);
      return { row: refundRow(made[0]), behaviour, first: false };
    });
  }

  async chargeByKey(idempotencyKey: string): Promise<ChargeRow | null> {
    await this.schema();
    const { rows } = await this.pool.query<ChargeRow>('SELECT * FROM payment_charges WHERE idempotency_key = $1', [idempotencyKey]);
    return rows[0] ? chargeRow(rows[0]) : null;
  }

  async refundByKey(idempotencyKey: string): Promise<RefundRow | null> {
    await this.schema();
    const { rows } = await this.pool.query<RefundRow>('SELECT * FROM payment_refunds WHERE idempotency_key = $1', [idempotencyKey]);
    return rows[0] ? refundRow(rows[0]) : null;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /**
   * Makes the tables once (two processes starting together: one makes them, under a lock), then
   * copies in the vault file they replace if it changed since its last copy; a failure is not kept,
   * the next call tries again.
   */
  private schema(): Promise<void> {
    this.ready ??= (async () => {
      if (!(await tablesMade(this.pool)))
        await inTransaction(this.pool, async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
          if (!(await tablesMade(client))) await client.query(SCHEMA);
        });
      if (this.importFrom) await this.copyIfChanged(this.importFrom);
    })().catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  /** Copies the vault file in when its signature (sizes and times of it and its WAL) is not the one last copied. */
  private async copyIfChanged(file: string): Promise<void> {
    const signature = fileSignature(file);
    if (signature === null) return;
    const lastCopied = async (client: Pool | PoolClient) =>
      (await client.query<{ signature: string }>('SELECT signature FROM payment_vault_copies WHERE file = $1', [file])).rows[0]?.signature;
    const before = await lastCopied(this.pool);
    if (before === signature) return;
    const copied = await inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      const earlier = await lastCopied(client);
      if (earlier === signature) return null;
      const counts = await copyVaultFile(client, file);
      await client.query(
        `INSERT INTO payment_vault_copies (file, signature, copied_at) VALUES ($1, $2, now())
         ON CONFLICT (file) DO UPDATE SET signature = EXCLUDED.signature, copied_at = EXCLUDED.copied_at`,
        [file, signature],
      );
      return { counts, again: earlier !== undefined };
    });
    if (!copied) return;
    const { cards, charges, refunds } = copied.counts;
    const what = `${cards} cards, ${charges} charges and ${refunds} refunds new to the tables`;
    if (copied.again)
      this.logger.warn(
        `${file} changed since its last copy (a process of an earlier version still writing it?): copied again, ${what}; stop every earlier version's process`,
      );
    else this.logger.log(`${file} copied into the vault's tables: ${what}`);
  }
}

/** Whether the vault's tables exist, read from pg_class under the statement's snapshot (the catalog cache may not yet show tables another process committed while this one waited for the lock). */
async function tablesMade(client: Pool | PoolClient): Promise<boolean> {
  const { rows } = await client.query<{ made: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.relname = 'payment_vault_copies' AND n.nspname = current_schema()) AS made`,
  );
  return rows[0].made;
}

/** The vault file's sizes and modification times, with its write-ahead log's; null when there is no file. */
function fileSignature(file: string): string | null {
  if (!existsSync(file)) return null;
  return [file, `${file}-wal`]
    .filter((path) => existsSync(path))
    .map((path) => {
      const { size, mtimeMs } = statSync(path);
      return `${size}:${Math.trunc(mtimeMs)}`;
    })
    .join('/');
}

/**
 * A keyed write, made again while the database is away: tries begin within
 * {@link REPEAT_WHILE_AWAY_MS} of the first (each bounded by the pool's connection and statement
 * timeouts); then its failure. A second try is made past that too, within
 * {@link SECOND_TRY_WITHIN_MS}: a process stopped for a while (SIGSTOP, a paused VM) wakes with its
 * statement's timer run out and the answer unread, and a charge tried again long after would come
 * after its purchase was settled without it.
 */
async function repeatedWhileAway<T>(write: () => Promise<T>): Promise<T> {
  const began = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return await write();
    } catch (error) {
      const waited = Date.now() + REPEAT_PAUSE_MS - began;
      const again = tries === 1 ? waited < SECOND_TRY_WITHIN_MS : waited < REPEAT_WHILE_AWAY_MS;
      if (!serverUnavailable(error) || !again) throw error;
      await sleep(REPEAT_PAUSE_MS);
    }
  }
}

/** Copies every card, charge and refund of a vault file the tables do not hold yet (in the caller's transaction); how many of each. */
async function copyVaultFile(client: PoolClient, file: string): Promise<{ cards: number; charges: number; refunds: number }> {
  const vault = new Database(file, { readonly: true, fileMustExist: true });
  const counts = { cards: 0, charges: 0, refunds: 0 };
  try {
    const tables = [
      ['cards', 'payment_cards', ['token', 'behaviour', 'brand', 'last4']],
      ['charges', 'payment_charges', ['idempotency_key', 'token', 'amount_cents', 'status', 'charge_id', 'reason']],
      ['refunds', 'payment_refunds', ['idempotency_key', 'charge_id', 'amount_cents', 'status', 'refund_id', 'reason']],
    ] as const;
    for (const [from, to, columns] of tables) {
      if (!vault.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(from)) continue;
      const types = columns.map((column) => (column === 'amount_cents' ? 'bigint[]' : 'text[]'));
      const insert = `INSERT INTO ${to} (${columns.join(', ')})
        SELECT * FROM unnest(${types.map((type, i) => `$${i + 1}::${type}`).join(', ')}) ON CONFLICT DO NOTHING`;
      let chunk: Array<Record<string, unknown>> = [];
      const flush = async () => {
        if (chunk.length)
          await client.query(
            insert,
            columns.map((column) => chunk.map((row) => row[column])),
          );
        chunk = [];
      };
      for (const row of vault.prepare(`SELECT ${columns.join(', ')} FROM ${from}`).iterate() as Iterable<Record<string, unknown>>) {
        chunk.push(row);
        if (chunk.length === IMPORT_CHUNK) await flush();
      }
      await flush();
    }
    return counts;
  } finally {
    vault.close();
  }
}
