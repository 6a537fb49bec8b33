import { AccountQueries } from '@deals/accounts';
import { UserDealPreference, UserDealPreferences } from '@deals/catalog';
import { PurchaseQueries } from '@deals/purchasing';
import { Injectable } from '@nestjs/common';
import { CardLinkQueries } from './card-link.queries';
import { EngagementQueries } from './engagement.queries';

/** The catalogue's `UserDealPreferences`, from the views of accounts, purchasing and engagement. */
@Injectable()
export class UserDealPreferencesFromViews extends UserDealPreferences {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly purchases: PurchaseQueries,
    private readonly cardLinks: CardLinkQueries,
    private readonly engagement: EngagementQueries,
  ) {
    super();
  }

  async of(partnerId: string, userId: string): Promise<UserDealPreference | null> {
    if (!(await this.accounts.user(partnerId, userId))) return null;
    const [unitsBought, fulfilledCardLinkDealIds, savedDealIds] = await Promise.all([
      this.purchases.unitsBoughtByDeal(partnerId, userId),
      this.cardLinks.fulfilledDealIds(partnerId, userId),
      this.engagement.savedDealIds(partnerId, userId),
    ]);
    return { savedDealIds, unitsBought, fulfilledCardLinkDealIds };
  }
}
