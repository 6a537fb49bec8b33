import { Clock, NotFound } from '@deals/kernel';
import { netOf, SettlementQueries, SettlementStatement, signedFigures, statementCsv } from '@deals/settlement';
import { Controller, Get, Param, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { CurrentMember, SitePageErrors } from './site-request';

const CHART_DAYS = 30;
/** The chart's drawing area, in SVG units: a bar a day. */
const WIDTH = 600;
const HEIGHT = 200;
const BAR = WIDTH / CHART_DAYS;

const money = (cents: number) =>
  `${cents < 0 ? '−' : ''}$${Math.floor(Math.abs(cents) / 100).toLocaleString('en-US')}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

/**
 * The last 30 days' net as bars drawn here (an SVG in the page: no script, no image fetched), above
 * and below a zero line, scaled to the largest day.
 */
function chartOf(statements: SettlementStatement[]) {
  const largest = Math.max(1, ...statements.map((s) => Math.abs(s.totals.netCents)));
  const hasNegative = statements.some((s) => s.totals.netCents < 0);
  const zero = hasNegative ? HEIGHT / 2 : HEIGHT;
  const scale = (hasNegative ? HEIGHT / 2 : HEIGHT) / largest;
  const bars = statements.map((s, i) => {
    const net = s.totals.netCents;
    const height = Math.max(net === 0 ? 0 : 1, Math.round(Math.abs(net) * scale));
    return {
      x: (i * BAR + 1).toFixed(1),
      y: net >= 0 ? zero - height : zero,
      width: (BAR - 2).toFixed(1),
      height,
      negative: net < 0,
      label: `${s.day}: net ${money(net)}`,
    };
  });
  return { width: WIDTH, height: HEIGHT, zero, bars, largest: money(largest) };
}

/** The partner's daily statements: the last 30 days as a chart and a table, a day's line items, its CSV. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner/settlements')
export class SettlementsController {
  constructor(
    private readonly pages: SitePages,
    private readonly settlements: SettlementQueries,
    private readonly clock: Clock,
  ) {}

  @Get()
  async list(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    const today = this.clock.now().toISOString().slice(0, 10);
    const from = new Date(Date.parse(today) - (CHART_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    const statements = await this.settlements.statements(member.accountId, from, today);
    const days = [...statements].reverse().map((s) => ({ ...s, net: money(s.totals.netCents), gross: money(s.totals.grossCents) }));
    return this.pages.send(request, reply, 'settlements', { title: 'Statements', chart: chartOf(statements), days, from, today });
  }

  @Get(':date')
  async day(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Param('date') date: string) {
    this.known(date);
    const { statement, lineItems } = await this.settlements.statement(member.accountId, date);
    const figures = signedFigures(statement.totals).map(([name, cents]) => ({ name, amount: money(cents) }));
    const lines = lineItems.map((l) => ({ ...l, moved: money(netOf(l)) }));
    return this.pages.send(request, reply, 'settlement', { title: `Statement of ${date}`, statement, figures, lines });
  }

  @Get(':date/line_items.csv')
  async csv(@Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Param('date') date: string) {
    this.known(date);
    const csv = statementCsv(await this.settlements.lineItems(member.accountId, date));
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="settlement-${date}.csv"`).send(csv);
  }

  /** A real UTC day, not after today. */
  private known(date: string): void {
    const real =
      /^\d{4}-\d{2}-\d{2}$/.test(date) &&
      !Number.isNaN(Date.parse(`${date}T00:00:00Z`)) &&
      new Date(`${date}T00:00:00Z`).toISOString().startsWith(date);
    if (!real || date > this.clock.now().toISOString().slice(0, 10)) throw new NotFound('date: no statement of that day');
  }
}
