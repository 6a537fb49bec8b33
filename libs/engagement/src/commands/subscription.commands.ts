import { AccountQueries } from '@deals/accounts';
import { RegionResolver } from '@deals/catalog';
import { Clock, EventStore, handleCommand, LogPosition, NotFound, PartnerCaller, ValidationFailed } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { subscriptionDecider, subscriptionId, SubscriptionStatus, subscriptionStream } from '../domain/subscription/subscription.decider';

/**
 * POST /users/:user_id/subscriptions: the region that serves `zip` (as regional lists find it),
 * one subscription per user and region; subscribing again answers it, reactivated if inactive.
 */
export class SubscribeUser extends Command<{ subscriptionId: string; position: LogPosition | null }> {
  constructor(
    readonly userId: string,
    /** Five digits. */
    readonly zip: string,
    readonly source: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(SubscribeUser)
export class SubscribeUserHandler implements ICommandHandler<SubscribeUser> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly regions: RegionResolver,
    private readonly accounts: AccountQueries,
  ) {}

  async execute({ userId, zip, source, caller }: SubscribeUser) {
    const user = await this.accounts.user(caller.partnerId, userId);
    if (!user) throw new NotFound('user not found');
    const region = await this.regions.resolve(zip);
    if (!region)
      throw new ValidationFailed([{ type: 'invalid', resource: 'subscription', field: 'zip', message: 'is served by no region' }]);
    const id = subscriptionId(caller.partnerId, userId, region._id);
    const { position } = await handleCommand(
      this.store,
      subscriptionStream(id),
      subscriptionDecider,
      {
        type: 'Subscribe',
        data: {
          subscriptionId: id,
          partnerId: caller.partnerId,
          userId,
          regionId: region._id,
          regionName: region.region.name,
          zip,
          // docs/decisions.md "Subscriptions": made with the partner's credentials or the user's own token, both vouch for the user's consent.
          confirmed: true,
          source: source ?? user.profile.source ?? null,
        },
      },
      { now: this.clock.now(), metadata: caller },
    );
    return { subscriptionId: id, position };
  }
}

/** PUT /subscriptions/:id. `userId`: an access token's user. */
export class SetSubscriptionStatus extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly subscriptionId: string,
    readonly status: SubscriptionStatus,
    readonly userId: string | undefined,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(SetSubscriptionStatus)
export class SetSubscriptionStatusHandler implements ICommandHandler<SetSubscriptionStatus> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ subscriptionId: id, status, userId, caller }: SetSubscriptionStatus) {
    const { position } = await handleCommand(
      this.store,
      subscriptionStream(id),
      subscriptionDecider,
      { type: 'SetSubscriptionStatus', data: { subscriptionId: id, partnerId: caller.partnerId, userId, status } },
      { now: this.clock.now(), metadata: caller },
    );
    return { position };
  }
}
