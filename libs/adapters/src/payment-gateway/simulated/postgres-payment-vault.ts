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
  BEHAVIOURS,
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
/** Statements of charges under way at once from one process (the pool holds 4); the charges asked meanwhile wait for the next. */
const CHARGE_BATCHES_AT_ONCE = 2;
/** The most charges one statement writes. */
const CHARGE_BATCH = 256;

/** Each test behaviour (and an unknown token's null) with the charge it decides, as the charge statement's parameters. */
const CHARGE_DECISIONS = (() => {
  const decided = [null, ...BEHAVIOURS].map((behaviour) => [behaviour, ...chargeDecision(behaviour, 'approved')] as const);
  return [decided.map((d) => d[0]), decided.map((d) => d[1]), decided.map((d) => d[3]), decided.map((d) => d[2] !== null)];
})();

/** {@link chargeMany}'s statement; named, so each connection plans it once. */
const CHARGE_MANY = `WITH asked AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) WITH ORDINALITY AS a(idempotency_key, token, amount_cents, new_charge_id, n)),
     decisions AS (SELECT * FROM unnest($5::text[], $6::text[], $7::text[], $8::bool[]) AS d(behaviour, status, reason, approved)),
     decided AS (
       SELECT a.*, cards.behaviour, d.status, d.reason, d.approved,
              (SELECT row_to_json(c) FROM payment_charges c WHERE c.idempotency_key = a.idempotency_key) AS earlier
         FROM asked a
         LEFT JOIN payment_cards cards ON cards.token = a.token
         LEFT JOIN decisions d ON d.behaviour IS NOT DISTINCT FROM cards.behaviour),
     made AS (
       INSERT INTO payment_charges (idempotency_key, token, amount_cents, status, charge_id, reason)
       SELECT idempotency_key, token, amount_cents, status, CASE WHEN approved THEN new_charge_id END, reason
         FROM decided WHERE earlier IS NULL
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING *)
     SELECT decided.behaviour, decided.earlier, row_to_json(made) AS made
       FROM decided LEFT JOIN made ON made.idempotency_key = decided.idempotency_key
      ORDER BY decided.n`;

/**
 * A charge a key, for many keys in one statement (one transaction): each asked charge with its
 * card's behaviour and the key's earlier record if any; the new ones written (`ON CONFLICT DO
 * NOTHING`) as their card's behaviour decides. A key asked twice in the batch is written once.
 */
async function chargeMany(pool: Pool, asked: readonly ChargeArgs[]): Promise<Array<VaultRecord<ChargeRow>>> {
  const first = new Map<string, number>();
  asked.forEach((a, i) => first.has(a.idempotencyKey) || first.set(a.idempotencyKey, i));
  const unique = [...first.values()].map((i) => asked[i]);
  const { rows } = await pool.query<{ behaviour: Behaviour | null; earlier: ChargeRow | null; made: ChargeRow | null }>({
    name: 'deals_vault_charge',
    text: CHARGE_MANY,
    values: [
      unique.map((a) => a.idempotencyKey),
      unique.map((a) => a.token),
      unique.map((a) => a.amountCents),
      unique.map((a) => a.newChargeId),
      ...CHARGE_DECISIONS,
    ],
  });
  const records = await Promise.all(
    rows.map(async ({ behaviour, earlier, made }, i): Promise<VaultRecord<ChargeRow>> => {
      if (made) return { row: chargeRow(made), behaviour, first: true };
      if (earlier) return { row: chargeRow(earlier), behaviour, first: false };
      // Another transaction wrote the key's charge after this statement's snapshot: that one is the charge.
      const { rows: written } = await pool.query<ChargeRow>('SELECT * FROM payment_charges WHERE idempotency_key = $1', [
        unique[i].idempotencyKey,
      ]);
      return { row: chargeRow(written[0]), behaviour, first: false };
    }),
  );
  const byKey = new Map(unique.map((a, i) => [a.idempotencyKey, records[i]]));
  return asked.map((a, i) =>
    first.get(a.idempotencyKey) === i ? byKey.get(a.idempotencyKey)! : { ...byKey.get(a.idempotencyKey)!, first: false },
  );
}

/**
 * Calls that wait and go together: at most `atOnce` runs of `run` under way; what is asked
 * meanwhile is run together in the next (up to {@link CHARGE_BATCH}). An idle process's call goes at once.
 */
class Batches<Asked, Answer> {
  private waiting: Array<{ asked: Asked; resolve: (answer: Answer) => void; reject: (error: unknown) => void }> = [];
  private running = 0;

  constructor(
    private readonly run: (asked: readonly Asked[]) => Promise<Answer[]>,
    private readonly atOnce: number,
  ) {}

  add(asked: Asked): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ asked, resolve, reject });
      if (this.running < this.atOnce) void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, CHARGE_BATCH);
    this.running++;
    try {
      const answers = await this.run(batch.map((b) => b.asked));
      batch.forEach((b, i) => b.resolve(answers[i]));
    } catch (error) {
      for (const b of batch) b.reject(error);
    } finally {
      this.running--;
      void this.next();
    }
  }
}

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
  private readonly charges = new Batches<ChargeArgs, VaultRecord<ChargeRow>>(
    (asked) => chargeMany(this.pool, asked),
    CHARGE_BATCHES_AT_ONCE,
  );

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

  /** Charges asked while others are written wait and are written together, in one statement. */
  private async chargeOnce(args: ChargeArgs): Promise<VaultRecord<ChargeRow>> {
    await this.schema();
    return this.charges.add(args);
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
