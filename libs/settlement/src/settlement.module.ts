import { Module } from '@nestjs/common';
import { SettlementsController } from './http/settlements.controller';
import { SettlementQueries } from './queries/settlement.queries';

/** Daily statements: their queries (no HTTP). */
@Module({ providers: [SettlementQueries], exports: [SettlementQueries] })
export class SettlementModule {}

@Module({ imports: [SettlementModule], controllers: [SettlementsController] })
export class SettlementHttpModule {}
