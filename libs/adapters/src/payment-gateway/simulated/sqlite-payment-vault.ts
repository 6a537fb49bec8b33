import Database from 'better-sqlite3';
import { openDurableDatabase } from '../../sqlite/open-durable-database';
import { SqliteWriteThread, WriteOutcomeUnknown } from '../../sqlite/write-thread';
import type { PaymentVault } from './payment-vault';
import { ChargeArgs, ChargeRow, RefundArgs, RefundRow, StoredCard, VAULT_SCHEMA, VaultRecord } from './payment-vault.writes';

/**
 * The vault as a file of the data folder (`payment-vault.sqlite`), for the embedded mode. Writes go
 * through a write thread (group commit, synchronous=FULL, off the event loop), as the event log's
 * do: a charge is answered only once its record is on disk.
 */
export class SqlitePaymentVault implements PaymentVault {
  private readonly db: Database.Database;
  private readonly writer: SqliteWriteThread;
  private readonly chargeRow: Database.Statement<[string], ChargeRow>;
  private readonly refundRow: Database.Statement<[string], RefundRow>;

  constructor(readonly file: string) {
    this.db = openDurableDatabase(file);
    this.db.exec(VAULT_SCHEMA);
    this.chargeRow = this.db.prepare('SELECT * FROM charges WHERE idempotency_key = ?');
    this.refundRow = this.db.prepare('SELECT * FROM refunds WHERE idempotency_key = ?');
    this.writer = new SqliteWriteThread({
      file,
      durability: 'full',
      programs: require.resolve('./payment-vault.writes'),
      walLimitBytes: 0,
    });
  }

  warmUp(): void {
    this.writer.prestart();
  }

  async storeCard(card: StoredCard): Promise<void> {
    await this.writer.run('storeCard', card);
  }

  charge(args: ChargeArgs): Promise<VaultRecord<ChargeRow>> {
    return this.idempotent(() => this.writer.run<VaultRecord<ChargeRow>>('charge', args));
  }

  refund(args: RefundArgs): Promise<VaultRecord<RefundRow>> {
    return this.idempotent(() => this.writer.run<VaultRecord<RefundRow>>('refund', args));
  }

  async chargeByKey(idempotencyKey: string): Promise<ChargeRow | null> {
    return this.chargeRow.get(idempotencyKey) ?? null;
  }

  async refundByKey(idempotencyKey: string): Promise<RefundRow | null> {
    return this.refundRow.get(idempotencyKey) ?? null;
  }

  async close(): Promise<void> {
    await this.writer.close();
    if (this.db.open) this.db.close();
  }

  /**
   * Charges and refunds are written once per idempotency key, so when the write thread stopped
   * before answering, the write is simply made again (on a new thread): it finds the first one if
   * it was committed, and makes it if not.
   */
  private async idempotent<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof WriteOutcomeUnknown)) throw error;
      return write();
    }
  }
}
