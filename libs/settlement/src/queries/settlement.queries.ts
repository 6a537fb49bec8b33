import { Clock, EventStore, ServiceUnavailable, ViewProgress, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { closesAt, daysBetween, digestOf, SettlementLineItem, SettlementTotals, totalsOf } from '../domain/settlement-day';
import { SETTLEMENT_LINES, SettlementLine } from '../projections/settlement-lines/settlement-lines.projection';

/** A partner's statement of one UTC day. */
export interface SettlementStatement {
  day: string;
  /**
   * Open until an hour after the day ends, and while a line dated that day may still come (a
   * purchase being charged, a refund not yet settled); closed, it never changes.
   */
  state: 'open' | 'closed';
  closesAt: string;
  totals: SettlementTotals;
  /** SHA-256 of the day's CSV, once closed (null while open). */
  digest: string | null;
}

const itemOf = (line: SettlementLine): SettlementLineItem => ({
  lineId: line._id,
  kind: line.kind,
  reference: line.reference,
  channel: line.channel,
  at: line.at!,
  position: line.position!,
  grossCents: line.grossCents,
  refundCents: line.refundCents,
  incentiveCents: line.incentiveCents,
  incentiveReversedCents: line.incentiveReversedCents,
  feeCents: line.feeCents,
  feeReversedCents: line.feeReversedCents,
});

/** Reads of statements, always within one partner. */
@Injectable()
export class SettlementQueries {
  constructor(
    private readonly views: ViewStore,
    private readonly clock: Clock,
    private readonly store: EventStore,
    private readonly progress: ViewProgress,
  ) {}

  /**
   * A day past its close is read only once the lines view has applied the whole log as it stands
   * now (statements wait for nothing else: no answer waits for that view). Behind past the wait
   * (its worker away, a rebuild under way), a closed day's figures and digest could still grow,
   * so the answer is 503 rather than a closed statement that later changes.
   */
  private async current(days: readonly string[]): Promise<void> {
    const now = this.clock.now().getTime();
    if (!days.some((day) => closesAt(day).getTime() <= now)) return;
    if (!(await this.progress.shows(SETTLEMENT_LINES, await this.store.head())))
      throw new ServiceUnavailable('the statements are behind the event log: ask again after Retry-After', 5);
  }

  /** The day's line items, in log order. */
  async lineItems(partnerId: string, day: string): Promise<SettlementLineItem[]> {
    await this.current([day]);
    const lines = await this.views.find<SettlementLine>(SETTLEMENT_LINES, { partnerId, day, booked: true }, { sort: { position: 1 } });
    return lines.map(itemOf);
  }

  async statement(partnerId: string, day: string): Promise<{ statement: SettlementStatement; lineItems: SettlementLineItem[] }> {
    const lineItems = await this.lineItems(partnerId, day);
    return { statement: this.statementOf(day, lineItems, await this.daysAwaiting(partnerId, [day])), lineItems };
  }

  /** Of `days`, those on which a line of the partner may still be booked (see `SettlementLine.blocking`). */
  private async daysAwaiting(partnerId: string, days: readonly string[]): Promise<ReadonlySet<string>> {
    const now = this.clock.now().getTime();
    const past = days.filter((day) => closesAt(day).getTime() <= now);
    if (past.length === 0) return new Set();
    const pending = await this.views.find<SettlementLine>(SETTLEMENT_LINES, { partnerId, pendingDay: { $in: past }, blocking: true });
    return new Set(pending.map((line) => line.pendingDay!));
  }

  /** The statements of the days from `from` to `to`, oldest first (days without a line too). */
  async statements(partnerId: string, from: string, to: string): Promise<SettlementStatement[]> {
    const days = daysBetween(from, to);
    await this.current(days);
    // The days named one by one: the stores find each through the (partnerId, day) index.
    const lines = await this.views.find<SettlementLine>(
      SETTLEMENT_LINES,
      { partnerId, booked: true, day: { $in: days } },
      { sort: { position: 1 } },
    );
    const byDay = new Map<string, SettlementLineItem[]>();
    for (const day of days) byDay.set(day, []);
    for (const line of lines) byDay.get(line.day!)!.push(itemOf(line));
    const awaiting = await this.daysAwaiting(partnerId, days);
    return days.map((day) => this.statementOf(day, byDay.get(day)!, awaiting));
  }

  private statementOf(day: string, lineItems: SettlementLineItem[], awaiting: ReadonlySet<string>): SettlementStatement {
    const closes = closesAt(day);
    const closed = this.clock.now().getTime() >= closes.getTime() && !awaiting.has(day);
    return {
      day,
      state: closed ? 'closed' : 'open',
      closesAt: closes.toISOString(),
      totals: totalsOf(lineItems),
      digest: closed ? digestOf(lineItems) : null,
    };
  }
}
