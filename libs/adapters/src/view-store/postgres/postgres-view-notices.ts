import { sessionClient } from '../../postgres-pool';
import { CheckpointListener, LogPosition } from '@deals/kernel';
import { Client, Pool } from 'pg';
import type { ServerGenerations } from '../server-generations';

/** The channel every commit notifies with the checkpoints it reached (see {@link CheckpointNotice}). */
const CHANNEL = 'deals_views';
/** PostgreSQL refuses a payload of 8000 bytes or more; a longer notice says "read the checkpoints" (an empty payload). */
const MAX_PAYLOAD = 7900;

/** A commit's notice: the positions reached, each with the generations (`collection@generation`) that reached it. */
type CheckpointNotice = Array<{ p: LogPosition; c: string[] }>;

/** The SQL expression that notifies `reached` (generations by position), its payload a parameter `param` numbers. */
export function notifyClause(reached: Map<LogPosition, string[]>, param: (value: unknown) => string): string {
  if (reached.size === 0) return 'true';
  const payload = JSON.stringify([...reached].map(([p, c]) => ({ p, c })) satisfies CheckpointNotice);
  return `pg_notify('${CHANNEL}', ${param(payload.length <= MAX_PAYLOAD ? payload : '')})`;
}

/** A generation's checkpoint, by its table's name. */
export async function checkpointOf(pool: Pool, name: string): Promise<LogPosition | null> {
  const found = await pool.query<{ position: string }>('SELECT position FROM view_checkpoints WHERE name = $1', [name]);
  return found.rows[0]?.position ?? null;
}

/**
 * The notices of checkpoints reached, heard by every process through one LISTEN connection a
 * process while some listener is registered, and told to the listeners for the generations this
 * process reads.
 */
export class CheckpointNotices {
  private readonly listeners = new Set<CheckpointListener>();
  /** The LISTEN connection, while some listener is registered. */
  private listening: Client | null = null;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly active: ServerGenerations,
  ) {}

  add(listener: CheckpointListener): () => void {
    this.listeners.add(listener);
    if (this.listening) listener.resync();
    else void this.listen();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Opens the LISTEN connection again if it was lost while listeners wait. */
  relisten(): void {
    if (!this.listening && this.listeners.size) void this.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    const listening = this.listening;
    this.listening = null;
    await listening?.end().catch(() => undefined);
  }

  /**
   * Opens the LISTEN connection (one for the process's listeners), then tells them to read the
   * checkpoints: what was committed before it listened is in no notice. Lost, it is opened again
   * on the next poll.
   */
  private async listen(): Promise<void> {
    if (this.listening || this.closed || this.listeners.size === 0) return;
    const client = sessionClient(this.url);
    this.listening = client;
    const lost = () => {
      if (this.listening === client) this.listening = null;
      void client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', ({ payload }) => this.heard(payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch {
      lost();
      return;
    }
    if (this.listening !== client) return;
    for (const listener of this.listeners) listener.resync();
  }

  /** Tells the listeners what a notice says of the generations this process reads. */
  private heard(payload: string | undefined): void {
    let notice: CheckpointNotice;
    try {
      notice = payload ? (JSON.parse(payload) as CheckpointNotice) : [];
    } catch {
      notice = [];
    }
    if (notice.length === 0) {
      for (const listener of this.listeners) listener.resync();
      return;
    }
    for (const { p, c } of notice)
      for (const named of c) {
        const at = named.lastIndexOf('@');
        const collection = named.slice(0, at);
        if (this.active.get(collection) !== named.slice(at + 1)) continue;
        for (const listener of this.listeners) listener.reached(collection, p);
      }
  }
}
