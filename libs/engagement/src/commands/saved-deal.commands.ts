import { AccountQueries } from '@deals/accounts';
import { CatalogQueries, NOT_PUBLIC_STATES } from '@deals/catalog';
import { Clock, EventStore, handleCommand, LogPosition, NotFound, PartnerCaller, ValidationFailed } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { savedDealDecider, savedDealId, savedDealStream } from '../domain/saved-deal/saved-deal.decider';

/** POST /saved_deals: a live user of the partner saves a public deal; saving it again answers the one saved. */
export class SaveDeal extends Command<{ savedDealId: string; position: LogPosition | null }> {
  constructor(
    readonly userId: string,
    readonly dealId: string,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(SaveDeal)
export class SaveDealHandler implements ICommandHandler<SaveDeal> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly catalog: CatalogQueries,
    private readonly accounts: AccountQueries,
  ) {}

  async execute({ userId, dealId, caller }: SaveDeal) {
    if (!(await this.accounts.user(caller.partnerId, userId))) throw new NotFound('user not found');
    const deal = await this.catalog.deal(dealId);
    if (!deal?.deal) throw new NotFound('deal not found');
    if (NOT_PUBLIC_STATES.includes(deal.state))
      throw new ValidationFailed([
        // eslint-disable-next-line no-restricted-syntax -- the deal's state, one of ours
        { type: 'invalid', resource: 'saved_deal', field: 'deal_id', message: `is ${deal.state}: only a public deal is saved` },
      ]);
    const id = savedDealId(caller.partnerId, userId, dealId);
    const { position } = await handleCommand(
      this.store,
      savedDealStream(id),
      savedDealDecider,
      { type: 'SaveDeal', data: { savedDealId: id, partnerId: caller.partnerId, userId, dealId } },
      { now: this.clock.now(), metadata: caller },
    );
    return { savedDealId: id, position };
  }
}

/** DELETE /saved_deals/:id. `userId`: an access token's user. */
export class RemoveSavedDeal extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly savedDealId: string,
    readonly userId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(RemoveSavedDeal)
export class RemoveSavedDealHandler implements ICommandHandler<RemoveSavedDeal> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ savedDealId: id, userId, caller }: RemoveSavedDeal) {
    const { position } = await handleCommand(
      this.store,
      savedDealStream(id),
      savedDealDecider,
      { type: 'RemoveSavedDeal', data: { savedDealId: id, partnerId: caller.partnerId, userId } },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
