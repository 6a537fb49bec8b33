import { eraseKeysStillKept, PersonalDataEventStore, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { RESALE_BUYER_ERASURES, ResaleBuyerErasure } from '../../projections/resale-buyer-erasures/resale-buyer-erasures.projection';

/**
 * Deletes the key of every reseller sale's buyer whose erasure the log records and whose key is
 * still kept: a stop between the erasure's record and its key's deletion, or a keys file restored
 * from before the erasure. Run as the process that keeps the views starts.
 */
@Injectable()
export class FinishResaleBuyerErasures {
  private readonly logger = new Logger('FinishResaleBuyerErasures');

  constructor(
    private readonly views: ViewStore,
    private readonly personalData: PersonalDataEventStore,
  ) {}

  /** How many keys it deleted. */
  async run(): Promise<number> {
    const erasures = await this.views.find<ResaleBuyerErasure>(RESALE_BUYER_ERASURES, {}, { sort: { erasedAt: 1, _id: 1 } });
    const finished = await eraseKeysStillKept(this.personalData, erasures);
    if (finished)
      this.logger.warn(
        `deleted the keys of ${finished} erased reseller buyers that were still kept (an interrupted erasure, or keys restored from before it)`,
      );
    return finished;
  }
}
