import type { DomainEvent } from '@deals/kernel';
import type { DealTerms, WorkflowState } from './deal-terms';

export type DealListed = DomainEvent<'DealListed', { deal: DealTerms; state: WorkflowState }>;
export type DealRevised = DomainEvent<'DealRevised', { dealId: string; changes: Partial<DealTerms>; removed: string[] }>;
export type DealStateChanged = DomainEvent<'DealStateChanged', { dealId: string; from: WorkflowState; to: WorkflowState }>;

export type DealEvent = DealListed | DealRevised | DealStateChanged;

export const dealStream = (dealId: string) => `deal-${dealId}`;
