import { servicePool } from '../postgres-pool';
import {
  ClaimOutcome,
  CLOCK_SEPARATOR,
  IdempotencyClaim,
  IdempotencyStore,
  KEPT_ROW_BYTES,
  RecordedAnswer,
  ServiceUnavailable,
} from '@deals/kernel';
import { randomInt, randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { CLAIM, OWNERS_LOCK_SPACE, Row, SCHEMA, SCHEMA_LOCK, SCHEMA_MADE } from './postgres-idempotency-schema';
import { PartnerSizes } from './postgres-partner-sizes';

/** Taking this process's owner lock again after its session was lost: tries, and the wait between them. */
const OWNER_LOCK_TRIES = 60;
const OWNER_LOCK_WAIT_MS = 50;
/** How often releases that failed are tried again. */
export const RELEASE_AGAIN_MS = 1_000;
/**
 * How long a release that failed is written again even once it finds no row of this process's: a
 * claim whose answer was lost (its statement cut off on the way) may still land on the server late.
 */
const LATE_CLAIM_MS = 60_000;

/**
 * Idempotency keys in the PostgreSQL database that holds the log (table `idempotency_keys`), shared
 * by every replica. A claim inserts the key's row, or finds it. Each process holds a session-level
 * advisory lock on its owner number for as long as it lives, on a connection of its own: a running
 * row whose owner holds no such lock was left by a process that died (PostgreSQL ends the session
 * and its locks when the connection drops), and the next claim of its key takes it over.
 */
export class PostgresIdempotencyStore extends IdempotencyStore {
  private readonly pool: Pool;
  private owner = 0;
  private lockClient: Client | null = null;
  private ready: Promise<void> | null = null;
  private readonly sizes: PartnerSizes;
  /**
   * Keys whose release failed (the database away), with when and the claim's token: released again
   * every second until it works. Meanwhile this process, their owner, resumes them itself when asked
   * (their runs have ended).
   */
  private readonly unreleased = new Map<string, { since: number; token: string }>();
  /**
   * Keys claimed in this process and not yet answered or released, with their claim's token: one
   * claim of a key at a time here (another meanwhile only reads). A row of this process's whose key
   * is not among them was left by a run that ended without its answer kept. Every write of a claim
   * (its answer, its release) names its token: a write that lands late, after the key was taken
   * again, changes nothing.
   */
  private readonly running = new Map<string, string>();
  private releaseTimer: NodeJS.Timeout | null = null;
  private releasingAll: Promise<void> | null = null;

  constructor(private readonly url: string) {
    super();
    this.pool = servicePool(url, 4);
    this.sizes = new PartnerSizes(this.pool);
  }

  /** Makes the table once, and holds this process's owner lock (again, after its connection was lost). */
  private start(): Promise<void> {
    this.ready ??= (async () => {
      const { rows } = await this.pool.query<{ made: boolean }>(SCHEMA_MADE);
      if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK}); ${SCHEMA}`);
      this.sizes.start();
      const client = new Client({ connectionString: this.url, keepAlive: true });
      client.on('error', () => undefined);
      client.on('end', () => {
        if (this.lockClient === client) {
          this.lockClient = null;
          this.ready = null;
        }
      });
      await client.connect();
      try {
        // The same owner number again after a lost connection (its claims in flight stay its own):
        // its old session may take a moment to end, holding the lock meanwhile. A new one no live
        // process holds at first (a dead one's is free again: its rows are taken over).
        for (let tries = 1; ; tries++) {
          const owner = this.owner || randomInt(1, 2 ** 31 - 1);
          const { rows: got } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [
            OWNERS_LOCK_SPACE,
            owner,
          ]);
          if (got[0].locked) {
            this.owner = owner;
            break;
          }
          if (!this.owner) continue;
          if (tries >= OWNER_LOCK_TRIES)
            // eslint-disable-next-line no-restricted-syntax -- the process's own lock name, for an operator
            throw new ServiceUnavailable(`this process's idempotency owner lock ${owner} is still held by its lost session`, 2);
          await new Promise((resolve) => setTimeout(resolve, OWNER_LOCK_WAIT_MS));
        }
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      this.lockClient = client;
    })().catch((error) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  /**
   * Every partner's count as last read, with this process's changes since; the counts are read
   * again every few seconds, and set from the rows themselves at each purge (a forgotten key taken
   * by a new claim, counted twice until then).
   */
  keptBytes(): ReadonlyMap<string, number> {
    return this.sizes.kept();
  }

  async claim(claim: IdempotencyClaim): Promise<ClaimOutcome> {
    await this.start();
    // The same key again while this process claims or runs it: only read (running, a mismatch, or answered meanwhile).
    if (this.running.has(claim.keyId)) return this.readClaimed(claim);
    const token = randomUUID();
    this.running.set(claim.keyId, token);
    let outcome: ClaimOutcome;
    try {
      outcome = await this.claimOnce(claim, token);
    } catch (error) {
      // Its write may have claimed the key with the answer lost: released once the database
      // answers, so that its repeats elsewhere do not find it running for as long as this process lives.
      this.running.delete(claim.keyId);
      this.releaseLater(claim.keyId, token);
      throw error;
    }
    if (outcome.kind === 'new' || outcome.kind === 'resumed') this.unreleased.delete(claim.keyId);
    else this.running.delete(claim.keyId);
    return outcome;
  }

  /** A key claimed here already: what a repeat is told, without writing. */
  private async readClaimed({ keyId, fingerprint, now }: IdempotencyClaim): Promise<ClaimOutcome> {
    const { rows } = await this.pool.query<Row>(
      'SELECT fingerprint, status, content_type, body FROM idempotency_keys WHERE key_id = $1 AND expires_at > $2',
      [keyId, now],
    );
    const row = rows[0];
    if (!row) return { kind: 'running' }; // its claim's write under way (a forgotten key's too)
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.status !== null) return { kind: 'answered', answer: { status: row.status, contentType: row.content_type!, body: row.body! } };
    return { kind: 'running' };
  }

  /**
   * One statement claims the key or reads what holds it: a new (or forgotten) key is inserted, else
   * its live row is read, with whether its owner is alive. A second statement only to take over a
   * run that ended or whose process died, or when the row changed between the two halves (a claim
   * elsewhere at the same moment): then it is read again.
   */
  private async claimOnce(
    { keyId, partnerId, fingerprint, now, expiresAt, runId }: IdempotencyClaim,
    token: string,
  ): Promise<ClaimOutcome> {
    for (;;) {
      const { rows } = await this.pool.query<Row & { claimed: boolean; alive: boolean }>(CLAIM, [
        keyId,
        fingerprint,
        this.owner,
        expiresAt,
        now,
        runId,
        partnerId,
        token,
      ]);
      const row = rows[0];
      if (!row) continue; // claimed, answered or purged elsewhere since this statement began: read again
      if (row.claimed) {
        this.sizes.count(partnerId, KEPT_ROW_BYTES);
        return { kind: 'new', startedAt: now, runId };
      }
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.status !== null) return { kind: 'answered', answer: { status: row.status, contentType: row.content_type!, body: row.body! } };
      // This process's and no claim of it runs here: its run ended with neither answer nor release
      // kept. Another process's that is alive: running there. Else (released, or its process dead) taken over.
      const mine = row.owner === this.owner;
      if (row.alive) return { kind: 'running' };
      const taken = await this.pool.query(
        'UPDATE idempotency_keys SET owner = $2, claim_token = $4 WHERE key_id = $1 AND owner = $3 AND status IS NULL RETURNING 1',
        [keyId, this.owner, row.owner, token],
      );
      // Owner 0: released by its run (see `release`), not left by a process that died.
      if (taken.rowCount === 1)
        return { kind: 'resumed', startedAt: Number(row.started_at), runId: row.run_id, ended: mine || row.owner === 0 };
    }
  }

  async holds(keyId: string, now: number): Promise<boolean> {
    await this.start();
    const { rowCount } = await this.pool.query('SELECT 1 FROM idempotency_keys WHERE key_id = $1 AND expires_at > $2', [keyId, now]);
    return rowCount === 1;
  }

  /** Kept: the key stays this process's when the write fails (its caller releases it, as on SQLite). */
  async answer(keyId: string, { status, contentType, body }: RecordedAnswer): Promise<void> {
    const token = this.running.get(keyId);
    const { rows } = await this.pool.query<{ partner: string }>(
      `UPDATE idempotency_keys SET status = $2, content_type = $3, body = $4, size = size + $6
       WHERE key_id = $1 AND claim_token = $5 AND status IS NULL RETURNING partner`,
      [keyId, status, contentType, body, token ?? null, body.byteLength],
    );
    this.ended(keyId, token);
    if (rows.length !== 1) throw new Error(`the claim of idempotency key ${keyId} is no longer this process's: its answer is not kept`);
    this.sizes.count(rows[0].partner, body.byteLength);
  }

  /** Owner 0 is no process's: the next claim takes the run over (resumed). */
  async release(keyId: string): Promise<void> {
    const token = this.running.get(keyId);
    if (token === undefined) return;
    try {
      await this.writeRelease(keyId, token);
    } catch (error) {
      // Left claimed, its repeats would be answered "running" for as long as this process lives.
      this.releaseLater(keyId, token);
      throw error;
    } finally {
      this.ended(keyId, token);
    }
  }

  /** The claim `token` of `keyId` no longer runs here (a later claim's entry left alone). */
  private ended(keyId: string, token: string | undefined): void {
    if (token !== undefined && this.running.get(keyId) === token) this.running.delete(keyId);
  }

  private releaseLater(keyId: string, token: string): void {
    if (this.unreleased.get(keyId)?.token !== token) this.unreleased.set(keyId, { since: Date.now(), token });
    this.releaseTimer ??= setInterval(() => void this.releaseAgain(), RELEASE_AGAIN_MS).unref();
  }

  private writeRelease(keyId: string, token: string) {
    return this.pool.query('UPDATE idempotency_keys SET owner = 0 WHERE key_id = $1 AND claim_token = $2 AND status IS NULL', [
      keyId,
      token,
    ]);
  }

  /**
   * Releases the keys whose release failed, until one fails again (then at the next tick); one pass
   * at a time. A key whose row is not (yet) its claim's is tried again for {@link LATE_CLAIM_MS}.
   */
  private releaseAgain(): Promise<void> {
    this.releasingAll ??= (async () => {
      for (const [keyId, { since, token }] of [...this.unreleased]) {
        if (this.unreleased.get(keyId)?.token !== token) continue; // claimed again meanwhile
        let released: boolean;
        try {
          released = (await this.writeRelease(keyId, token)).rowCount === 1;
        } catch {
          return;
        }
        if ((released || Date.now() - since > LATE_CLAIM_MS) && this.unreleased.get(keyId)?.token === token) this.unreleased.delete(keyId);
      }
      if (this.unreleased.size === 0 && this.releaseTimer) {
        clearInterval(this.releaseTimer);
        this.releaseTimer = null;
      }
    })().finally(() => (this.releasingAll = null));
    return this.releasingAll;
  }

  async purge(now: number, world?: string): Promise<number> {
    if (world !== undefined) return this.purgeWorld(now, world);
    if (!this.ready) return 0; // nothing claimed by this process yet: the table may not even exist
    await this.ready;
    // Real time's purge leaves test clocks' worlds alone: theirs go by their clock's time.
    const { rowCount } = await this.pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1 AND strpos(partner, $2) = 0', [
      now,
      CLOCK_SEPARATOR,
    ]);
    await this.sizes.recount();
    return rowCount ?? 0;
  }

  /**
   * One test clock's world's expired keys, from any process (the one running the clock's jobs claims
   * none): what they took up is taken from that world's count alone, not every count read again. It
   * reads the table through (no index by partner: each keyed request would pay for one, for the sake
   * of a sandbox's advances).
   */
  private async purgeWorld(now: number, world: string): Promise<number> {
    const { rows: made } = await this.pool.query<{ made: boolean }>(SCHEMA_MADE);
    if (!made[0].made) return 0;
    const { rows } = await this.pool.query<{ count: string; bytes: string | null }>(
      `WITH gone AS (DELETE FROM idempotency_keys WHERE partner = $1 AND expires_at <= $2 RETURNING size)
       SELECT count(*)::text AS count, sum(size)::text AS bytes FROM gone`,
      [world, now],
    );
    const bytes = Number(rows[0].bytes ?? 0);
    if (bytes > 0) {
      this.sizes.count(world, -bytes);
      await this.sizes.sendNow();
    }
    return Number(rows[0].count);
  }

  async close(): Promise<void> {
    if (this.releaseTimer) clearInterval(this.releaseTimer);
    this.releaseTimer = null;
    await this.sizes.close(this.ready !== null);
    const client = this.lockClient;
    this.lockClient = null;
    await client?.end().catch(() => undefined);
    await this.pool.end();
  }
}
