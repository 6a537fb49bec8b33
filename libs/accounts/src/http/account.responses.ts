import { z } from 'zod';
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

/** Part 2.14, as POST /users/:user/access_tokens answers it. */
export const AccessTokenAnswer = z
  .object({
    status: z.literal('success'),
    access_token: z.object({
      id: z.string().meta({ description: 'the token itself: send it as Authorization: Bearer <id> or access_token=<id>' }),
      user_id: z.string(),
      expires_in: z.number().int(),
      scope: z.string(),
      access: z.string(),
    }),
  })
  .meta({
    example: {
      status: 'success',
      access_token: { id: 'q3L…', user_id: 'u1', expires_in: 3600, scope: 'user,credit_card', access: 'read,write' },
    },
  });
