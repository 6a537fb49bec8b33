import { ImportDeal, ImportRegion, RegionTerms, DealTerms, WorkflowState } from '@deals/catalog';
import { CommandCaller, DomainError, laterPosition, LogPosition, ValidationFailed, ValidationIssue } from '@deals/kernel';
import { StockInventory, stockTotalIssues } from '@deals/purchasing';
import { findMalformedText } from '@deals/wire';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';

/** A deal as an import file gives it: the v1 deal's fields plus the total inventory `quantity`. */
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
      // Nothing of a refused record is written (a report of "not imported" must mean it): the
      // listing is checked first, then the quantity is stocked, where the units sold and held are
      // decided on the inventory's own stream (a check there would race the purchases), and the
      // listing is written last. Before, a new price and state went live with a refused quantity.
      const quantityIssues = quantity === undefined ? [] : stockTotalIssues(quantity);
      if (quantityIssues.length) throw new ValidationFailed(quantityIssues);
      if (quantity === undefined) return (await this.commands.execute(new ImportDeal(deal as DealTerms, state, caller))).position;
      await this.commands.execute(new ImportDeal(deal as DealTerms, state, caller, true));
      const stocked = await this.commands.execute(new StockInventory(deal.id, quantity, caller));
      try {
        const listed = await this.commands.execute(new ImportDeal(deal as DealTerms, state, caller));
        return laterPosition(stocked.position, listed.position);
      } catch (error) {
        // The listing changed between its check and its write (another import of the same deal).
        if (!(error instanceof ValidationFailed)) throw error;
        throw new ValidationFailed(
          error.issues.map((issue) => ({
            ...issue,
            // eslint-disable-next-line no-restricted-syntax -- an operator's import report, a message of ours and a record's position
            message: `${issue.message} (the listing changed meanwhile: the quantity was stocked)`,
          })),
        );
      }
    });
  }

  private async run<T extends { id?: unknown }>(
    records: T[],
    onEach: (() => void) | undefined,
    importOne: (record: T) => Promise<LogPosition | null>,
  ): Promise<ImportReport> {
    if (!Array.isArray(records)) throw new Error('the import file must hold a JSON array');
    const outcomes: ImportOutcome[] = new Array(records.length);
    let position: LogPosition | null = null;
    let next = 0;
    /** An unexpected failure: no record is started after it, and it is thrown once those under way are done. */
    let failure: { error: unknown } | null = null;
    // Records are imported sixteen at a time: two of one id would race, and either could win.
    const idOf = (i: number): unknown => (records[i] as { id?: unknown } | null)?.id;
    const firstOf = new Map<unknown, number>();
    records.forEach((_, i) => {
      const id = idOf(i);
      if (id !== undefined && id !== null && !firstOf.has(id)) firstOf.set(id, i);
    });
    /** Why the record at `i` is refused before it is imported, if it is. */
    const own = (issue: ValidationIssue) => ({ message: issue.message, issues: [issue] });
    const refusal = (i: number): { message: string; issues: ValidationIssue[] } | null => {
      const record = records[i] as unknown;
      // A record that is not an object (null, a number, a list) is refused like any bad record.
      if (record === null || typeof record !== 'object' || Array.isArray(record))
        return own({ type: 'invalid', resource: 'request', field: 'record', message: 'must be an object' });
      // Text no store keeps (a NUL, a lone surrogate), as the API's edge refuses it: each field named.
      const malformed: ValidationIssue[] = [];
      findMalformedText(record, [], 'record', malformed);
      if (malformed.length) return { message: new ValidationFailed(malformed).message, issues: malformed };
      const first = firstOf.get(idOf(i));
      if (first === undefined || first === i) return null;
      return own({
        type: 'invalid',
        resource: 'request',
        field: 'id',
        // eslint-disable-next-line no-restricted-syntax -- an operator's import report, a message of ours and a record's position
        message: `appears more than once in this file: only its first record (#${first + 1}) is imported`,
      });
    };
    const worker = async () => {
      while (next < records.length && !failure) {
        const i = next++;
        const id = String(idOf(i) ?? `#${i + 1}`);
        const refused = refusal(i);
        if (refused) {
          outcomes[i] = { id, ok: false, ...refused };
          onEach?.();
          continue;
        }
        try {
          const p = await importOne(records[i]);
          if (p !== null && (position === null || p > position)) position = p;
          outcomes[i] = { id, ok: true };
        } catch (error) {
          // Not thrown at once: the other workers' records are mid-write, and the caller may exit.
          if (!(error instanceof DomainError)) failure ??= { error };
          else outcomes[i] = { id, ok: false, message: error.message, issues: error.issues };
        }
        onEach?.();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (failure) throw (failure as { error: unknown }).error;
    return { outcomes, position };
  }
}
