import {
  CardDetails,
  CardRejected,
  Clock,
  EventStore,
  handleCommand,
  IdGenerator,
  isSandbox,
  laterPosition,
  loadAggregate,
  LogPosition,
  NotFound,
  PartnerCaller,
  PaymentGateway,
  TEST_CARD_NUMBERS,
  ValidationFailed,
  ValidationIssue,
  ViewStore,
} from '@deals/kernel';
import { STORED_CARDS, StoredCard } from '../projections/stored-cards/stored-cards.projection';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { cardClaimDecider, cardClaimStream } from '../domain/card/card-claim';
import { cardDecider } from '../domain/card/card.decider';
import { cardStream } from '../domain/card/card.events';
import { cardBrand, cardModeIssue, hasExpired, normaliseCardNumber } from '../domain/card/card-number';
import { AccountsSettings } from './accounts-settings';
import { userDecider } from '../domain/user/user.decider';
import { userStream } from '../domain/user/user.events';

/** A card past its expiry month (by the service's clock) is refused. */
export function cardExpiryIssue(card: Pick<CardDetails, 'month' | 'year'>, now: Date): ValidationIssue | null {
  return hasExpired(card.month, card.year, now)
    ? { type: 'invalid', resource: 'credit_card', field: 'year', message: 'has expired' }
    : null;
}

/**
 * What refuses a card as entered before it is tokenized (POST /credit_cards, the full purchase's
 * card): its expiry, then its mode (a test card with live credentials, a real one in a sandbox).
 */
export function cardIssue(
  card: CardDetails,
  now: Date,
  partnerId: string,
  settings: Pick<AccountsSettings, 'liveTakesTestCards'>,
): ValidationIssue | null {
  const expired = cardExpiryIssue(card, now);
  if (expired) return expired;
  const modeIssue = cardModeIssue(normaliseCardNumber(card.number), isSandbox(partnerId), settings.liveTakesTestCards, TEST_CARD_NUMBERS);
  return modeIssue ? { type: 'invalid', resource: 'credit_card', field: 'number', message: modeIssue } : null;
}

/** What may be shown of a card as entered, not stored: its brand, last four digits and expiry. */
export function enteredCard(card: CardDetails): { brand: string; last4: string; month: number; year: number } {
  const number = normaliseCardNumber(card.number);
  return { brand: cardBrand(number) ?? 'unknown', last4: number.slice(-4), month: card.month, year: card.year };
}

export interface StoredCardOutcome {
  cardId: string;
  position: LogPosition | null;
}

/**
 * POST /credit_cards: the card (its fields checked with the request) is checked for expiry,
 * exchanged for a token, and only the token is kept.
 */
export class StoreCard extends Command<StoredCardOutcome> {
  constructor(
    readonly userId: string,
    readonly card: CardDetails,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(StoreCard)
export class StoreCardHandler implements ICommandHandler<StoreCard> {
  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly gateway: PaymentGateway,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly settings: AccountsSettings,
  ) {}

  async execute({ userId, card, caller }: StoreCard): Promise<StoredCardOutcome> {
    const now = this.clock.now();
    const issue = cardIssue(card, now, caller.partnerId, this.settings);
    if (issue) throw new ValidationFailed([issue]);
    const user = await loadAggregate(this.store, userStream(userId), userDecider);
    if (user.state.status !== 'active' || user.state.partnerId !== caller.partnerId) throw new NotFound('user not found');
    const { month, year, zip } = card;
    let tokenized;
    try {
      tokenized = await this.gateway.tokenize(card);
    } catch (error) {
      if (!(error instanceof CardRejected)) throw error;
      throw new ValidationFailed([
        // eslint-disable-next-line no-restricted-syntax -- the processor's reason, not the caller's value
        { type: 'invalid', resource: 'credit_card', field: 'number', message: `was refused by the processor: ${error.reason}` },
      ]);
    }
    // The same card stored again for the same user is the card already stored (renewed below if
    // its expiry or zip code changed).
    const known = await this.views.findOne<StoredCard>(STORED_CARDS, {
      fingerprint: tokenized.fingerprint,
      userId,
      partnerId: caller.partnerId,
      deleted: false,
    });
    if (known && known.expMonth === month && known.expYear === year && known.zipCode === zip) return { cardId: known._id, position: null };
    // Calls storing the same card for the user at this moment agree on one id through its claim.
    const claim = known
      ? null
      : await handleCommand(
          this.store,
          cardClaimStream(caller.partnerId, userId, tokenized.fingerprint),
          cardClaimDecider,
          {
            type: 'ClaimCard',
            data: { partnerId: caller.partnerId, userId, cardId: this.ids.next() },
          },
          { now, metadata: caller },
        );
    const cardId = known ? known._id : claim!.state.cardId!;
    const stored = await handleCommand(
      this.store,
      cardStream(cardId),
      cardDecider,
      {
        type: 'StoreCard',
        data: {
          cardId,
          partnerId: caller.partnerId,
          userId,
          token: tokenized.token,
          brand: tokenized.brand,
          last4: tokenized.last4,
          expMonth: month,
          expYear: year,
          zipCode: zip,
          fingerprint: tokenized.fingerprint,
          storedAt: now.toISOString(),
        },
      },
      { now, metadata: caller },
    );
    // A user's first card becomes the default.
    const chosen = await handleCommand(
      this.store,
      userStream(userId),
      userDecider,
      {
        type: 'ChooseDefaultCard',
        data: { userId, partnerId: caller.partnerId, cardId, onlyIfNone: true },
      },
      { now, metadata: caller },
    );
    // The latest of the three: a write-nothing choice of default reports its stream's last event, older than the card.
    return { cardId, position: laterPosition(chosen.position, laterPosition(stored.position, claim?.position ?? null)) };
  }
}

/** PUT /credit_cards/:id/default. */
export class MakeCardDefault extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly cardId: string,
    readonly actingUserId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(MakeCardDefault)
export class MakeCardDefaultHandler implements ICommandHandler<MakeCardDefault> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ cardId, actingUserId, caller }: MakeCardDefault) {
    const card = await loadAggregate(this.store, cardStream(cardId), cardDecider);
    const { state } = card;
    if (state.status === 'none' || state.partnerId !== caller.partnerId || (actingUserId !== undefined && state.userId !== actingUserId))
      throw new NotFound('credit card not found');
    return handleCommand(
      this.store,
      userStream(state.userId),
      userDecider,
      {
        type: 'ChooseDefaultCard',
        data: { userId: state.userId, partnerId: caller.partnerId, cardId, onlyIfNone: false },
      },
      { now: this.clock.now(), metadata: caller },
    );
  }
}
