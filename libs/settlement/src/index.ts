/** Settlement: each partner's statement of a UTC day, from the sales, refunds and card-link transactions in the log. */
export { SettlementHttpModule, SettlementModule } from './settlement.module';
export { SettlementQueries } from './queries/settlement.queries';
export type { SettlementStatement } from './queries/settlement.queries';
export {
  closesAt,
  daysBetween,
  digestOf,
  netOf,
  signedFigures,
  statementCsv,
  totalsOf,
  CLOSE_AFTER_MS,
  CSV_HEADER,
  LINE_KINDS,
} from './domain/settlement-day';
export type { LineFigures, LineKind, SettlementLineItem, SettlementTotals } from './domain/settlement-day';
export { settlementProjections, settlementLinesProjection } from './projections';
