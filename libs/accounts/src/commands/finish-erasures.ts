import { eraseKeysStillKept, PersonalDataEventStore, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { USER_ERASURES, UserErasure } from '../projections/user-erasures/user-erasures.projection';

/**
 * Deletes the key of every user whose erasure the log records and whose key is still kept: a stop
 * between an erasure's record and its key's deletion, or a keys file restored from before an
 * erasure. Run as the process that keeps the views starts.
 */
@Injectable()
export class FinishErasures {
  private readonly logger = new Logger('FinishErasures');

  constructor(
    private readonly views: ViewStore,
    private readonly personalData: PersonalDataEventStore,
  ) {}

  /** How many keys it deleted. */
  async run(): Promise<number> {
    const erasures = await this.views.find<UserErasure>(USER_ERASURES, {}, { sort: { erasedAt: 1, _id: 1 } });
    const finished = await eraseKeysStillKept(
      this.personalData,
      erasures.map((erasure) => ({ subject: erasure._id, erasedAt: erasure.erasedAt })),
    );
    if (finished)
      this.logger.warn(
        `deleted the keys of ${finished} erased users that were still kept (an interrupted erasure, or keys restored from before it)`,
      );
    return finished;
  }
}
