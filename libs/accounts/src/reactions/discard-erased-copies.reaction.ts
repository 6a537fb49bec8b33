import { ViewProgress, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { USER_ACCOUNTS, UserAccount } from '../projections/user-accounts/user-accounts.projection';

/**
 * Once the process that keeps the views folds a user's erasure, however it was asked (the API, the
 * partner site, an operator's command from another process), the view files are made to hold no
 * earlier copy of the profile (`ViewStore.discardReplaced`).
 */
@Injectable()
export class DiscardErasedCopies {
  private readonly logger = new Logger('PersonalData');

  constructor(progress: ViewProgress, views: ViewStore) {
    progress.onCommitted(USER_ACCOUNTS, (documents) => {
      if (!documents.some((doc) => (doc as UserAccount).erasedAt !== undefined)) return;
      views
        .discardReplaced()
        .catch((error) => this.logger.warn(`an erased profile's earlier copies stay until the next checkpoint: ${String(error)}`));
    });
  }
}
