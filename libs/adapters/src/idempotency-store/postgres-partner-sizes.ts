import { Pool } from 'pg';

/** How often a process adds its own changes of size to the shared counts, and reads everyone's. */
const SIZES_EVERY_MS = 5000;

/**
 * What each partner's idempotency keys take up, shared by the processes in `idempotency_usage`:
 * every partner's count as last read, with this process's changes since; a process adds its
 * changes there and reads everyone's every few seconds.
 */
export class PartnerSizes {
  /** Every partner's count as last read from `idempotency_usage`, and this process's changes since it last added them there. */
  private sizes = new Map<string, number>();
  private unsent = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;

  constructor(private readonly pool: Pool) {}

  /** Sends now and every few seconds from here on (once the table is made). */
  start(): void {
    this.timer ??= setInterval(() => void this.send(), SIZES_EVERY_MS).unref();
    void this.send();
  }

  kept(): ReadonlyMap<string, number> {
    if (this.unsent.size === 0) return this.sizes;
    const sizes = new Map(this.sizes);
    for (const [partner, bytes] of this.unsent) sizes.set(partner, (sizes.get(partner) ?? 0) + bytes);
    return sizes;
  }

  count(partner: string, bytes: number): void {
    this.unsent.set(partner, (this.unsent.get(partner) ?? 0) + bytes);
  }

  /** Adds this process's changes of size to the shared counts and reads them all (one at a time; a failure keeps the changes for the next). */
  send(): Promise<void> {
    this.sending ??= (async () => {
      const unsent = this.unsent;
      this.unsent = new Map();
      try {
        const { rows } = await this.pool.query<{ partner: string; bytes: string }>(
          `WITH added AS (
             INSERT INTO idempotency_usage (partner, bytes) SELECT * FROM unnest($1::text[], $2::bigint[])
             ON CONFLICT (partner) DO UPDATE SET bytes = idempotency_usage.bytes + excluded.bytes RETURNING partner, bytes)
           SELECT partner, bytes FROM added
           UNION ALL SELECT partner, bytes FROM idempotency_usage WHERE partner NOT IN (SELECT partner FROM added)`,
          [[...unsent.keys()], [...unsent.values()]],
        );
        this.sizes = new Map(rows.map((row) => [row.partner, Number(row.bytes)]));
      } catch {
        for (const [partner, bytes] of unsent) this.count(partner, bytes);
      }
    })().finally(() => (this.sending = null));
    return this.sending;
  }

  /** Sends after any send under way (a process that claims nothing has no timer sending them). */
  async sendNow(): Promise<void> {
    await this.sending;
    await this.send();
  }

  /**
   * Sets the counts from the rows, which hold this process's changes not yet added (dropped here);
   * another process's, added after, count twice until the next recount.
   */
  async recount(): Promise<void> {
    await this.sending;
    this.unsent = new Map();
    await this.pool.query(`
      WITH counted AS (SELECT partner, sum(size) AS bytes FROM idempotency_keys GROUP BY partner),
        gone AS (DELETE FROM idempotency_usage WHERE partner NOT IN (SELECT partner FROM counted))
      INSERT INTO idempotency_usage (partner, bytes) SELECT partner, bytes FROM counted
      ON CONFLICT (partner) DO UPDATE SET bytes = excluded.bytes`);
    await this.send();
  }

  /** Stops sending; `flush`: what this process has not sent yet is sent first, if it can be. */
  async close(flush: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (flush && this.unsent.size) await this.send().catch(() => undefined);
  }
}
