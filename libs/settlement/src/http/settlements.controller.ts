import { Clock, isSandbox, ValidationFailed } from '@deals/kernel';
import { ApiAnswer, ApiErrors, ApiRequest, Caller, CurrentCaller, CalledBy, PARTNERS } from '@deals/wire';
import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { statementCsv } from '../domain/settlement-day';
import { SettlementQueries } from '../queries/settlement.queries';
import { SettlementAnswer, SettlementListAnswer, toLineItem, toSettlement } from './settlements.answers';
import { SettlementParams, SettlementRangeQuery } from './settlements.request';

const CSV_EXAMPLE =
  'position,line_id,kind,reference,channel,at,gross_cents,refund_cents,incentive_cents,incentive_reversed_cents,fee_cents,fee_reversed_cents\n' +
  '00000000000000001234,sale:P7P72Z9DDJ3Ix1zDc4n,sale,P7P72Z9DDJ3Ix1zDc4n,card,2026-06-15T14:02:11.000Z,9800,0,0,0,0,0\n';

/** A partner's daily statements: what its sales, refunds and card-link transactions moved, by UTC day. */
@ApiTags('settlement')
@Controller('v1/settlements')
export class SettlementsController {
  constructor(
    private readonly settlements: SettlementQueries,
    private readonly clock: Clock,
  ) {}

  @Get()
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: 'Daily statements over a range',
    description:
      '`from` and `to` (UTC days, both included, at most 92): each day’s figures, state and digest, oldest first; days without a line too.',
  })
  @ApiAnswer(SettlementListAnswer, { errors: [422] })
  @ApiRequest({ query: SettlementRangeQuery })
  async list(@Query() query: SettlementRangeQuery, @CurrentCaller() caller: Caller) {
    this.notFuture(query.to, 'to');
    const statements = await this.settlements.statements(caller.partnerId, query.from, query.to);
    return { status: 'success', settlements: statements.map((s) => toSettlement(s, !isSandbox(caller.partnerId))) };
  }

  @Get(':date')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "A day's statement",
    description:
      'The UTC day’s figures and the line items behind them, in log order. Open until an hour after the day ends (figures may still grow); ' +
      'closed, it never changes and carries the SHA-256 of its CSV. Something that happens later (a refund, a reversal) lands on the day it happens.',
  })
  @ApiAnswer(SettlementAnswer, { errors: [422] })
  @ApiRequest({ params: SettlementParams })
  async get(@Param() params: SettlementParams, @CurrentCaller() caller: Caller) {
    this.notFuture(params.date, 'date');
    const { statement, lineItems } = await this.settlements.statement(caller.partnerId, params.date);
    return { status: 'success', settlement: toSettlement(statement, !isSandbox(caller.partnerId)), line_items: lineItems.map(toLineItem) };
  }

  @Get(':date/line_items.csv')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "A day's line items as CSV",
    description: 'The statement’s line items, in log order, LF line ends: the digest of a closed day is the SHA-256 of exactly this.',
  })
  @ApiResponse({
    status: 200,
    description: 'the line items',
    content: { 'text/csv': { schema: { type: 'string' }, example: CSV_EXAMPLE } },
  })
  @ApiErrors(422)
  @ApiRequest({ params: SettlementParams })
  async csv(@Param() params: SettlementParams, @CurrentCaller() caller: Caller, @Res({ passthrough: true }) reply: FastifyReply) {
    this.notFuture(params.date, 'date');
    const lineItems = await this.settlements.lineItems(caller.partnerId, params.date);
    void reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="settlement-${params.date}.csv"`);
    return statementCsv(lineItems);
  }

  /** A day after today has no statement yet. */
  private notFuture(day: string, field: string): void {
    if (day > this.clock.now().toISOString().slice(0, 10))
      throw new ValidationFailed([{ type: 'invalid', resource: 'settlement', field, message: 'is in the future' }]);
  }
}
