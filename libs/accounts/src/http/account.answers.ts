import { z } from 'zod';
import type { PartnerSettings } from '../queries/partner.queries';
import type { StoredCard } from '../projections/stored-cards/stored-cards.projection';
import type { UserAccount } from '../projections/user-accounts/user-accounts.projection';

/** A user as the API answers it. `points` is the user's credit balance in cents. */
export const toUser = (user: UserAccount, avatarUrl: string) => ({
  id: user._id,
  firstname: user.profile.firstName ?? '',
  lastname: user.profile.lastName ?? '',
  image_url: avatarUrl,
  points: user.credits,
  token: user.profile.token,
});

/**
 * A stored card. The only card a user has is the default even before one was chosen; with several, the
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

/** The user, as {@link toUser} writes it. */
export const userSchema = z
  .object({
    id: z.string(),
    firstname: z.string().meta({ description: 'first name; empty when none was given' }),
    lastname: z.string().meta({ description: 'last name; empty when none was given' }),
    image_url: z.string().meta({ description: "the user's picture (absolute URL)" }),
    points: z.number().int().meta({ description: "the user's credit, in cents" }),
    token: z.string().nullable().meta({ description: "the partner's token for the user; null when none was given" }),
  })
  .meta({ id: 'User', description: 'a user' });

const exampleUser = {
  id: 'u4Kd8',
  firstname: 'Ann',
  lastname: 'Lee',
  image_url: 'https://deals.example.com/images/users/default-avatar.png',
  points: 1200,
  token: 'partner-1',
};

/** `{status, user}`: GET and PUT /users/:user_id, update_by_email. */
export const UserAnswer = z
  .object({ status: z.literal('success'), user: userSchema })
  .meta({ example: { status: 'success', user: exampleUser } });

/** `{status, user_id}`: POST /users. */
export const UserIdAnswer = z
  .object({ status: z.literal('success'), user_id: z.string().meta({ description: 'the new user' }) })
  .meta({ example: { status: 'success', user_id: 'u4Kd8' } });

/** `{status, user_id, erased_at}`: DELETE /users/:user_id/personal_data. */
export const UserErasureAnswer = z
  .object({
    status: z.literal('success'),
    user_id: z.string(),
    erased_at: z.string().meta({ description: "when the personal data was erased (ISO 8601); the first erasure's, asked again" }),
  })
  .meta({ example: { status: 'success', user_id: 'u4Kd8', erased_at: '2026-11-27T10:15:00.000Z' } });

/** The stored card, as {@link toCard} writes it. */
export const creditCardSchema = z
  .object({
    id: z.string(),
    credit_card_id: z.string().meta({ description: 'the same identifier' }),
    number: z.string().meta({ description: 'masked: only the last four digits show', example: 'XXXX-XXXX-XXXX-4242' }),
    type: z.string().meta({ description: 'the card brand', example: 'Visa' }),
    primary: z.boolean().meta({ description: "the user's default card (a user's only card is)" }),
    deleted: z.boolean(),
  })
  .meta({ id: 'CreditCard', description: 'a stored card' });

const exampleCard = {
  id: 'c2Wm5',
  credit_card_id: 'c2Wm5',
  number: 'XXXX-XXXX-XXXX-4242',
  type: 'Visa',
  primary: true,
  deleted: false,
};

/** GET /credit_cards: the cards, or with count=true their number. */
export const CreditCardsAnswer = z
  .union([
    z.object({ status: z.literal('success'), credit_cards: z.array(creditCardSchema) }),
    z.object({ status: z.literal('success'), count: z.number().int().meta({ description: "the user's cards (count=true)" }) }),
  ])
  .meta({ example: { status: 'success', credit_cards: [exampleCard] } });

/** `{status, credit_card_id}`: POST /credit_cards. */
export const CreditCardIdAnswer = z
  .object({ status: z.literal('success'), credit_card_id: z.string().meta({ description: 'the stored card' }) })
  .meta({ example: { status: 'success', credit_card_id: 'c2Wm5' } });

/** `{status}`: a call that answers only its success. */
export const StatusAnswer = z.object({ status: z.literal('success') }).meta({ example: { status: 'success' } });

/** A user's access token, as POST /users/:user/access_tokens answers it. */
export const AccessTokenAnswer = z
  .object({
    status: z.literal('success'),
    access_token: z
      .object({
        id: z.string().meta({ description: 'the token itself: send it as Authorization: Bearer <id> or access_token=<id>' }),
        user_id: z.string(),
        expires_in: z.number().int().meta({ description: 'seconds of life' }),
        scope: z.string().meta({ description: 'comma-separated resource names (user, credit_card, ...) or all' }),
        access: z.string().meta({ description: 'read, write, or read,write' }),
      })
      .meta({ id: 'AccessToken', description: "a user's temporary access token (deprecated with its call)" }),
  })
  .meta({
    example: {
      status: 'success',
      access_token: { id: 'q3L…', user_id: 'u1', expires_in: 3600, scope: 'user,credit_card', access: 'read,write' },
    },
  });

/** `{status, partner_settings}`: GET and PUT /v1/partner_settings. */
export const PartnerSettingsAnswer = z
  .object({
    status: z.literal('success'),
    partner_settings: z
      .object({
        redemption_rollback_window_hours: z
          .number()
          .int()
          .meta({ description: "how long after its redemption a coupon's redemption may be rolled back, in hours (0: never)" }),
        redemption_rollback_window_is_default: z
          .boolean()
          .meta({ description: "whether that is the service's default (the partner set none)" }),
      })
      .meta({ id: 'PartnerSettings', description: 'how the service treats the partner’s coupons' }),
  })
  .meta({
    example: { status: 'success', partner_settings: { redemption_rollback_window_hours: 24, redemption_rollback_window_is_default: true } },
  });

/** The settings, as {@link PartnerSettingsAnswer} writes them. */
export const toPartnerSettings = (settings: PartnerSettings) => ({
  redemption_rollback_window_hours: settings.rollbackWindowHours,
  redemption_rollback_window_is_default: settings.rollbackWindowIsDefault,
});
