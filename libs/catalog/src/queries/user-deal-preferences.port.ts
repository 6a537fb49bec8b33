/**
 * What the service knows of a user that shapes its regional list (its `user_id` parameter, which
 * filters by the user's preferences; docs/decisions.md "A regional list for a user"): its saved deals, the units it
 * has bought of each deal, and the card-linked deals whose link it has used up (fulfilled).
 */
export interface UserDealPreference {
  savedDealIds: readonly string[];
  unitsBought: ReadonlyMap<string, number>;
  fulfilledCardLinkDealIds: readonly string[];
}

/**
 * A port: the catalogue asks, the contexts that keep purchases, card links and saved deals answer
 * (engagement provides it). Null for a user that is not a live user of the partner.
 */
export abstract class UserDealPreferences {
  abstract of(partnerId: string, userId: string): Promise<UserDealPreference | null>;
}
