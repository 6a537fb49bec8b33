import { Clock, DailyUsage, realClockOf, SystemClock, UsageDelta, UsageStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import type { PartnerRef } from './authenticated-request';
import type { RequestLimits } from './request-limits';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** How often the counts of this process are added to the store. */
export const USAGE_FLUSH_EVERY_MS = 5_000;
/** Days of request counts kept; older ones are purged. */
export const USAGE_KEEP_DAYS = 90;
/** Days of counts {@link UsageMeter.usageOf} gives, today included. */
const RECENT_DAYS = 7;

/** Answers by status, of one partner. */
type ByStatus = Map<number, number>;

/** What the partner site shows of a partner's use of the API. */
export interface PartnerUsage {
  /**
   * Requests counted against the partner's budget in the current one-minute window (by every
   * replica when the budgets are on Redis), and when the window ends; null when budgets are off.
   */
  thisMinute: { requests: number; budget: number; resetsInMs: number } | null;
  /** Today's answers by status (UTC day), stored and not yet stored. */
  today: DailyUsage;
  /** The last days' answers, oldest first, today last; a day without any has `byStatus` empty. */
  days: DailyUsage[];
  /** When each credential of the partner was last used (ms since 1970, a whole minute). */
  credentialsLastUsed: Record<string, number>;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Counts the answers of partners' requests in memory (a map increment per answer) and adds them to
 * the {@link UsageStore} every {@link USAGE_FLUSH_EVERY_MS} and on {@link stop}; a flush that fails
 * keeps its counts for the next one. A credential's use is recorded once per minute per process.
 */
@Injectable()
export class UsageMeter {
  private readonly logger = new Logger('UsageMeter');
  /** Counts not yet stored, by day, then partner. */
  private pending = new Map<string, Map<string, ByStatus>>();
  /** The bucket of the day `dayStart` begins (what {@link count} adds to until the day ends). */
  private current: Map<string, ByStatus> | null = null;
  private dayStart = 0;
  private dayEnd = 0;
  /** The minute each credential was last recorded in, by partner. */
  private readonly seen = new Map<string, Map<string, number>>();
  private lastUsed: UsageDelta['lastUsed'] = [];
  /** Flushes and reads one after another: a read never sees counts both in memory and stored. */
  private turn: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private loggedAt = Number.NEGATIVE_INFINITY;
  /** The request budgets the API counts, when they are on. */
  private budgets: RequestLimits | null = null;

  /** The clock's time in ms; the system clock's without making a Date on every answer. */
  private readonly now: () => number;

  constructor(
    private readonly store: UsageStore,
    clock: Clock,
  ) {
    // Usage is counted in real time, the calls made under a test clock too.
    const real = realClockOf(clock);
    this.now = real instanceof SystemClock ? Date.now : () => real.now().getTime();
  }

  /** Reads "this minute" from the API's budget counters. */
  readBudgetsFrom(limits: RequestLimits | null): void {
    this.budgets = limits;
  }

  /** Counts one answer of an authenticated partner request, with the credential it presented. */
  count(partnerId: string, credentialId: string | undefined, status: number): void {
    const now = this.now();
    if (now >= this.dayEnd || now < this.dayStart || this.current === null) this.enterDay(now);
    let byStatus = this.current!.get(partnerId);
    if (byStatus === undefined) this.current!.set(partnerId, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    if (credentialId === undefined) return;
    const minute = now - (now % MINUTE_MS);
    let credentials = this.seen.get(partnerId);
    if (credentials === undefined) this.seen.set(partnerId, (credentials = new Map()));
    if (credentials.get(credentialId) === minute) return;
    credentials.set(credentialId, minute);
    this.lastUsed.push({ partnerId, credentialId, minute });
  }

  private enterDay(now: number): void {
    this.dayStart = now - (now % DAY_MS);
    this.dayEnd = this.dayStart + DAY_MS;
    const day = dayOf(now);
    let bucket = this.pending.get(day);
    if (bucket === undefined) this.pending.set(day, (bucket = new Map()));
    this.current = bucket;
    if (this.timer === null && !this.stopped) {
      this.timer = setInterval(() => void this.flush().catch((error) => this.failed(error)), USAGE_FLUSH_EVERY_MS);
      this.timer.unref();
    }
  }

  /** Logged once a minute at most while the store fails (the counts wait in memory meanwhile). */
  private failed(error: unknown): void {
    const now = Date.now();
    if (now - this.loggedAt < MINUTE_MS) return;
    this.loggedAt = now;
    this.logger.error(`usage counts could not be stored; kept for the next flush: ${String(error)}`);
  }

  /** Adds this process's counts to the store. */
  flush(): Promise<void> {
    return this.inTurn(async () => {
      const delta = this.take();
      if (delta.requests.length === 0 && delta.lastUsed.length === 0) return;
      try {
        await this.store.add(delta);
      } catch (error) {
        this.putBack(delta);
        throw error;
      }
    });
  }

  /** Stops the timer and stores what is counted: the API calls it before the stores close. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Forgets the days of counts older than {@link USAGE_KEEP_DAYS}. */
  purgeOld(): Promise<void> {
    return this.store.purgeBefore(dayOf(this.now() - USAGE_KEEP_DAYS * DAY_MS));
  }

  /** The partner's use of the API: this minute against its budget, today and the last days by status, its credentials' last use. */
  async usageOf(partner: Pick<PartnerRef, 'id' | 'requestsPerMinute'>): Promise<PartnerUsage> {
    const now = this.now();
    const days = Array.from({ length: RECENT_DAYS }, (_, i) => dayOf(now - (RECENT_DAYS - 1 - i) * DAY_MS));
    const [thisMinute, { stored, lastUsed }] = await Promise.all([
      this.thisMinute(partner),
      this.inTurn(async () => {
        const [daily, used] = await Promise.all([this.store.dailyUsage(partner.id, days), this.store.lastUsed(partner.id)]);
        // Taken at once, in this turn: no flush has moved counts from memory to the store meanwhile.
        return { stored: this.withPending(partner.id, days, daily), lastUsed: this.withPendingUse(partner.id, used) };
      }),
    ]);
    return { thisMinute, today: stored[stored.length - 1], days: stored, credentialsLastUsed: lastUsed };
  }

  private async thisMinute(partner: Pick<PartnerRef, 'id' | 'requestsPerMinute'>): Promise<PartnerUsage['thisMinute']> {
    if (this.budgets === null) return null;
    const budget = partner.requestsPerMinute ?? this.budgets.settings.partnerPerMinute;
    const window = await this.budgets.partnerWindow(partner.id).catch(() => ({ requests: 0, resetsInMs: 0 }));
    return { ...window, budget };
  }

  private withPending(partnerId: string, days: string[], stored: DailyUsage[]): DailyUsage[] {
    const byDay = new Map(stored.map((usage) => [usage.day, usage]));
    return days.map((day) => {
      const byStatus = { ...byDay.get(day)?.byStatus };
      for (const [status, count] of this.pending.get(day)?.get(partnerId) ?? []) byStatus[status] = (byStatus[status] ?? 0) + count;
      return { day, byStatus };
    });
  }

  private withPendingUse(partnerId: string, stored: Record<string, number>): Record<string, number> {
    const found = { ...stored };
    for (const use of this.lastUsed)
      if (use.partnerId === partnerId && use.minute > (found[use.credentialId] ?? -1)) found[use.credentialId] = use.minute;
    return found;
  }

  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const result = this.turn.then(run);
    this.turn = result.catch(() => undefined);
    return result;
  }

  /** Empties the counts into a delta. */
  private take(): UsageDelta {
    const requests: UsageDelta['requests'] = [];
    for (const [day, partners] of this.pending)
      for (const [partnerId, byStatus] of partners)
        for (const [status, count] of byStatus) requests.push({ partnerId, day, status, count });
    const lastUsed = this.lastUsed;
    this.pending = new Map();
    this.current = null;
    this.lastUsed = [];
    this.forgetPastMinutes();
    return { requests, lastUsed };
  }

  /** A credential seen in an earlier minute is recorded again at its next use anyway. */
  private forgetPastMinutes(): void {
    const now = this.now();
    const minute = now - (now % MINUTE_MS);
    for (const [partnerId, credentials] of this.seen) {
      for (const [credentialId, seenIn] of credentials) if (seenIn !== minute) credentials.delete(credentialId);
      if (credentials.size === 0) this.seen.delete(partnerId);
    }
  }

  /** Puts a delta that could not be stored back with the counts since. */
  private putBack({ requests, lastUsed }: UsageDelta): void {
    for (const { partnerId, day, status, count } of requests) {
      let partners = this.pending.get(day);
      if (partners === undefined) this.pending.set(day, (partners = new Map()));
      let byStatus = partners.get(partnerId);
      if (byStatus === undefined) partners.set(partnerId, (byStatus = new Map()));
      byStatus.set(status, (byStatus.get(status) ?? 0) + count);
    }
    this.lastUsed = [...lastUsed, ...this.lastUsed];
    this.current = null;
  }
}

/** Forgets old usage counts now and every `everyMs` (each API process may: a purge is idempotent); returns the stop. */
export function purgeOldUsage(meter: UsageMeter, everyMs: number, onError: (error: unknown) => void): () => void {
  const purge = () => void meter.purgeOld().catch(onError);
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
