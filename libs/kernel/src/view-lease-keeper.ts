import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ViewLeases } from './ports/view-store.port';
import type { ProjectionDaemon } from './projection-daemon';
import type { RunnerLogger } from './projection-runner';

/** How often the leases are renewed and the views balanced among the live keepers. */
const BALANCE_MS = 1000;
/** How long a lease lasts unrenewed: a killed or frozen keeper's views move after this. */
const LEASE_MS = 3000;

export interface LeaseKeeperOptions {
  balanceMs?: number;
  leaseMs?: number;
  /** This process's name among the keepers (host, pid and a random part by default). */
  keeper?: string;
}

/**
 * Has a daemon keep the views this process holds leases for, where several processes keep the
 * views: every {@link BALANCE_MS} it renews the leases, takes or gives up views so that each live
 * process keeps its fair part, and tells the daemon the views it holds. A failed balance is tried
 * again at the next tick; meanwhile the daemon keeps what it had (a lease lapsed meanwhile may be
 * kept twice for a moment, which changes nothing).
 */
export class ViewLeaseKeeper {
  readonly keeper: string;
  private daemon: ProjectionDaemon | null = null;
  private timer: NodeJS.Timeout | null = null;
  private balancing: Promise<void> = Promise.resolve();
  private failing = false;
  private stopped = false;
  private readonly balanceMs: number;
  private readonly leaseMs: number;

  constructor(
    private readonly leases: ViewLeases,
    private readonly collections: readonly string[],
    private readonly logger: RunnerLogger,
    options: LeaseKeeperOptions = {},
  ) {
    this.balanceMs = options.balanceMs ?? BALANCE_MS;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.keeper = options.keeper ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  }

  /** The views this process may keep from the start (a first balance), before the daemon starts. */
  async first(): Promise<string[]> {
    return [...(await this.leases.balance(this.keeper, this.collections, this.leaseMs))].sort();
  }

  /** Balances every {@link BALANCE_MS} from now on, telling `daemon` what it keeps. */
  start(daemon: ProjectionDaemon): void {
    if (this.stopped) return;
    this.daemon = daemon;
    this.timer = setInterval(() => {
      this.balancing = this.balancing.then(() => this.balance());
    }, this.balanceMs);
    this.timer.unref();
  }

  /** Stops balancing (the daemon is stopped next, then {@link leave}). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.balancing;
  }

  /** Gives the views up to the other keepers at once (their next balance takes them). */
  async leave(): Promise<void> {
    try {
      await this.leases.leave(this.keeper);
    } catch (error) {
      this.logger.error(`giving up the views' leases failed; they move once they lapse (${this.leaseMs} ms)`, error);
    }
  }

  private async balance(): Promise<void> {
    if (this.stopped) return;
    let held: string[];
    try {
      held = await this.leases.balance(this.keeper, this.collections, this.leaseMs);
    } catch (error) {
      if (!this.failing) this.logger.error("renewing the views' leases failed; keeping what this process kept, retrying", error);
      this.failing = true;
      return;
    }
    if (this.failing) this.logger.log("the views' leases are renewed again");
    this.failing = false;
    if (this.stopped || !this.daemon) return;
    const before = new Set(this.daemon.keptNames());
    const now = new Set(held);
    const taken = held.filter((name) => !before.has(name));
    const given = [...before].filter((name) => !now.has(name));
    if (taken.length === 0 && given.length === 0) return;
    this.logger.log(
      `keeping ${now.size} of ${this.collections.length} views` +
        (taken.length ? `; taken: ${taken.sort().join(', ')}` : '') +
        (given.length ? `; given up: ${given.sort().join(', ')}` : ''),
    );
    await this.daemon.keepOnly(held);
  }
}
