import { ImportDeal, ImportRegion, RegionTerms, DealTerms, WorkflowState } from '@deals/catalog';
import { CommandCaller, DomainError, LogPosition, ValidationFailed, ValidationIssue } from '@deals/kernel';
import { StockInventory, stockTotalIssues } from '@deals/purchasing';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';

/** A deal as an import file gives it: part 2.1's fields plus the total inventory `quantity`. */
export type DealImportRecord = DealTerms & { quantity?: number; state?: WorkflowState };

export interface ImportOutcome {
  id: string;
  ok: boolean;
  message?: string;
  issues?: ValidationIssue[];
}

export interface ImportReport {
  outcomes: ImportOutcome[];
  position: LogPosition | null;
}

const CONCURRENCY = 16;

/** Loads regions and deals into the catalogue and the deals' inventory, as ordinary commands. */
@Injectable()
export class CatalogueImport {
  constructor(private readonly commands: CommandBus) {}

  regions(records: RegionTerms[], caller: CommandCaller, onEach?: () => void): Promise<ImportReport> {
    return this.run(records, onEach, async (region) => (await this.commands.execute(new ImportRegion(region, caller))).position);
  }

  deals(records: DealImportRecord[], caller: CommandCaller, onEach?: () => void): Promise<ImportReport> {
    return this.run(records, onEach, async (record) => {
      const { quantity, state, ...deal } = record;
      // A quantity the inventory refuses (not a whole number, below the units sold and held)
      // refuses the whole record before its listing is written: a report of "not imported" must
      // mean nothing of it was (before, a new price or state went live with the refusal).
      const quantityIssues = quantity === undefined ? [] : stockTotalIssues(quantity);
      if (quantityIssues.length) throw new ValidationFailed(quantityIssues);
      if (quantity !== undefined) await this.commands.execute(new StockInventory(deal.id, quantity, caller, true));
      const listed = await this.commands.execute(new ImportDeal(deal as DealTerms, state, caller));
      if (quantity === undefined) return listed.position;
      try {
        const stocked = await this.commands.execute(new StockInventory(deal.id, quantity, caller));
        return stocked.position ?? listed.position;
      } catch (error) {
        // Units held or sold between the check and the stock: the listing's changes stand, and the
        // report says so.
        if (!(error instanceof ValidationFailed)) throw error;
        throw new ValidationFailed(error.issues.map((issue) => ({ ...issue, message: `${issue.message} (units were held meanwhile: the listing's other changes were recorded)` })));
      }
    });
  }

  private async run<T extends { id?: unknown }>(records: T[], onEach: (() => void) | undefined, importOne: (record: T) => Promise<LogPosition | null>): Promise<ImportReport> {
    if (!Array.isArray(records)) throw new Error('the import file must hold a JSON array');
    const outcomes: ImportOutcome[] = new Array(records.length);
    let position: LogPosition | null = null;
    let next = 0;
    const worker = async () => {
      while (next < records.length) {
        const i = next++;
        const id = String(records[i]?.id ?? `#${i + 1}`);
        try {
          const p = await importOne(records[i]);
          if (p !== null && (position === null || p > position)) position = p;
          outcomes[i] = { id, ok: true };
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          outcomes[i] = { id, ok: false, message: error.message, issues: error.issues };
        }
        onEach?.();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { outcomes, position };
  }
}
