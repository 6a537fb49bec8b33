import { Command } from '@nestjs/cqrs';
import type { CommandCaller, LogPosition } from '@deals/kernel';
import type { DealTerms, WorkflowState } from '../domain/deal/deal-terms';
import type { RegionTerms } from '../domain/region/region.events';

export interface Appended {
  /** Log position of the last event appended, or null when nothing changed. */
  position: LogPosition | null;
}

export class ImportRegion extends Command<Appended> {
  constructor(
    readonly region: RegionTerms,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

/** Lists a deal or, for a known id, records what changed (and a state move, when one is asked). */
/**
 * Lists a deal, or records what changed of it. `checkOnly`: decides on the listing as it is and
 * writes nothing (a refusal throws), so that an import can refuse a record before writing any of it.
 */
export class ImportDeal extends Command<Appended> {
  constructor(
    readonly deal: DealTerms,
    readonly state: WorkflowState | undefined,
    readonly caller: CommandCaller,
    readonly checkOnly = false,
  ) {
    super();
  }
}

/** `moved`: false when the deal was in that state already (nothing written). */
export class TransitionDeal extends Command<Appended & { moved: boolean }> {
  constructor(
    readonly dealId: string,
    readonly to: WorkflowState,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}
