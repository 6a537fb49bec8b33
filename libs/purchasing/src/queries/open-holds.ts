import { CatalogQueries } from '@deals/catalog';
import { EventStore, loadCachedAggregate, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { inventoryDecider, unitsOf } from '../domain/inventory/inventory.decider';
import { inventoryStream, partnerInventoryStream } from '../domain/inventory/inventory.events';
import { SANDBOX_HOLDS, SandboxHolds } from '../projections/sandbox-holds/sandbox-holds.projection';

export interface OpenHold {
  dealId: string;
  holdId: string;
  /** Epoch ms. */
  expiresAt: number;
  /** The sandbox whose own inventory of the deal holds it; none: the live deal's. */
  partnerId?: string;
}

/**
 * Every hold the inventories hold open, lapsed ones too until their release is recorded: what a
 * starting process re-arms release jobs for and checks for owners. The deal view names the deals
 * with units held, the sandbox holds view the sandboxes' copies (the deal view leaves them out);
 * each of their inventories is read from the log (once a start: the fold is cached for the next
 * reader and the deal's next command). Bounded by the holds of the last five minutes and those
 * whose release was never recorded, not by the history.
 */
@Injectable()
export class OpenHolds {
  constructor(
    private readonly store: EventStore,
    private readonly catalog: CatalogQueries,
    private readonly views: ViewStore,
  ) {}

  async list(): Promise<OpenHold[]> {
    const open: OpenHold[] = [];
    for (const dealId of await this.catalog.dealsWithOpenHolds()) {
      const { state } = await loadCachedAggregate(this.store, inventoryStream(dealId), inventoryDecider);
      unitsOf(state).holds.forEach((hold, holdId) => void open.push({ dealId, holdId, expiresAt: hold.expiresAt }));
    }
    for (const { dealId, partnerId } of await this.views.find<SandboxHolds>(SANDBOX_HOLDS, { held: { $gt: 0 } })) {
      const { state } = await loadCachedAggregate(this.store, partnerInventoryStream(dealId, partnerId), inventoryDecider);
      unitsOf(state).holds.forEach((hold, holdId) => void open.push({ dealId, holdId, expiresAt: hold.expiresAt, partnerId }));
    }
    return open;
  }
}
