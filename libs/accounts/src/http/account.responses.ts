import type { StoredCard } from '../projections/stored-cards/stored-cards.projection';
import type { UserAccount } from '../projections/user-accounts/user-accounts.projection';

/** Part 2.7. `points` is the user's credit balance in cents. */
export const toUser = (user: UserAccount, avatarUrl: string) => ({
  id: user._id,
  firstname: user.profile.firstName ?? '',
  lastname: user.profile.lastName ?? '',
  image_url: avatarUrl,
  points: user.credits,
  token: user.profile.token,
});

/**
 * Part 2.8. The only card a user has is the default even before one was chosen; with several, the
 * chosen default (the first stored, until another is chosen).
 */
export const toCard = (card: StoredCard, defaultCardId: string | null, onlyCard: boolean) => ({
  id: card._id,
  credit_card_id: card._id,
  number: `XXXX-XXXX-XXXX-${card.last4}`,
  type: card.brand,
  primary: onlyCard || card._id === defaultCardId,
  deleted: card.deleted,
});
