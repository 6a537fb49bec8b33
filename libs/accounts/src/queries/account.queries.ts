import { findOfPartner, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { STORED_CARDS, StoredCard } from '../projections/stored-cards/stored-cards.projection';
import { USER_ACCOUNTS, UserAccount } from '../projections/user-accounts/user-accounts.projection';
import { USER_ERASURES, UserErasure } from '../projections/user-erasures/user-erasures.projection';
import { emailKey, legacyEmailKey } from '../domain/user/user.events';

/** Reads of users and cards, always within one partner: another partner's records do not exist. */
@Injectable()
export class AccountQueries {
  constructor(private readonly views: ViewStore) {}

  /** A live user of this partner (a deleted user is not found). */
  async user(partnerId: string, userId: string): Promise<UserAccount | null> {
    return findOfPartner<UserAccount>(this.views, USER_ACCOUNTS, userId, partnerId, (user) => !user.deleted);
  }

  /** A user of this partner, deleted or not (what an update answers). */
  async userEvenDeleted(partnerId: string, userId: string): Promise<UserAccount | null> {
    return findOfPartner<UserAccount>(this.views, USER_ACCOUNTS, userId, partnerId);
  }

  /** A user of this partner by email (case-insensitive): the live one holding it, else a deleted one that held it. */
  async userByEmailEvenDeleted(partnerId: string, email: string): Promise<UserAccount | null> {
    const found = await this.views.find<UserAccount>(
      USER_ACCOUNTS,
      // A view written before addresses were folded keeps some outside ASCII under their lower case.
      { emailKey: { $in: [...new Set([emailKey(email), legacyEmailKey(email)])] }, partnerId },
      { sort: { registeredAt: -1 } },
    );
    return found.find((user) => !user.deleted) ?? found[0] ?? null;
  }

  /** A partner's erased users, the latest first: those not acknowledged yet, or those acknowledged. */
  erasures(partnerId: string, acknowledged: boolean, limit: number): Promise<UserErasure[]> {
    return this.views.find<UserErasure>(
      USER_ERASURES,
      { partnerId, acknowledgedAt: acknowledged ? { $ne: null } : null },
      { sort: { erasedAt: -1, _id: 1 }, limit },
    );
  }

  countErasures(partnerId: string, acknowledged: boolean): Promise<number> {
    return this.views.count(USER_ERASURES, { partnerId, acknowledgedAt: acknowledged ? { $ne: null } : null });
  }

  async card(partnerId: string, cardId: string): Promise<StoredCard | null> {
    return findOfPartner<StoredCard>(this.views, STORED_CARDS, cardId, partnerId, (card) => !card.deleted);
  }

  cards(partnerId: string, userId: string, skip: number, limit: number): Promise<StoredCard[]> {
    return this.views.find<StoredCard>(STORED_CARDS, { userId, partnerId, deleted: false }, { sort: { storedAt: 1, _id: 1 }, skip, limit });
  }

  countCards(partnerId: string, userId: string): Promise<number> {
    return this.views.count(STORED_CARDS, { userId, partnerId, deleted: false });
  }
}
