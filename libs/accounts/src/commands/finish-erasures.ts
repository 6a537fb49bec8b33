import { PersonalDataEventStore, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { USER_ERASURES, UserErasure } from '../projections/user-erasures/user-erasures.projection';

/** Users whose keys one question to the key store covers. */
const ASKED_AT_ONCE = 500;

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
    const erasedAt = new Map(erasures.map((erasure) => [erasure._id, erasure.erasedAt]));
    let finished = 0;
    // The key store asked once for many users at a time: a start reads every erasure ever recorded.
    for (let from = 0; from < erasures.length; from += ASKED_AT_ONCE) {
      const kept = await this.personalData.keptOf(erasures.slice(from, from + ASKED_AT_ONCE).map((erasure) => erasure._id));
      for (const userId of kept) await this.personalData.erase(userId, new Date(erasedAt.get(userId)!));
      finished += kept.length;
    }
    if (finished)
      this.logger.warn(
        `deleted the keys of ${finished} erased users that were still kept (an interrupted erasure, or keys restored from before it)`,
      );
    return finished;
  }
}
