import type { Projection } from '@deals/kernel';
import { settlementLinesProjection } from './settlement-lines/settlement-lines.projection';

/** Every projection settlement owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const settlementProjections = [settlementLinesProjection] as Projection[];
export { settlementLinesProjection };
export type { SettlementLine } from './settlement-lines/settlement-lines.projection';
