import { Clock, EventStore, handleCommand, loadAggregate, ValidationFailed } from '@deals/kernel';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { dealDecider } from '../domain/deal/deal.decider';
import { dealStream } from '../domain/deal/deal.events';
import { regionDecider } from '../domain/region/region.decider';
import { regionStream } from '../domain/region/region.events';
import { ImportDeal, ImportRegion, TransitionDeal } from './catalog.commands';

@CommandHandler(ImportRegion)
export class ImportRegionHandler implements ICommandHandler<ImportRegion> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ region, caller }: ImportRegion) {
    const { position } = await handleCommand(
      this.store,
      regionStream(String(region?.id)),
      regionDecider,
      { type: 'ListRegion', data: { region } },
      {
        now: this.clock.now(),
        metadata: caller,
      },
    );
    return { position };
  }
}

@CommandHandler(ImportDeal)
export class ImportDealHandler implements ICommandHandler<ImportDeal> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ deal, state, caller, checkOnly }: ImportDeal) {
    // A deal belongs to a region the catalogue knows; checked here because it crosses aggregates.
    const region = await loadAggregate(this.store, regionStream(String(deal?.region_id)), regionDecider);
    if (region.state.status === 'unlisted') {
      throw new ValidationFailed([{ type: 'not_found', resource: 'deal', field: 'region_id', message: 'names no known region' }]);
    }
    const command = { type: 'ListDeal' as const, data: { deal, state } };
    if (checkOnly) {
      dealDecider.decide(command, (await loadAggregate(this.store, dealStream(String(deal?.id)), dealDecider)).state, this.clock.now());
      return { position: null };
    }
    const { position } = await handleCommand(this.store, dealStream(deal.id), dealDecider, command, {
      now: this.clock.now(),
      metadata: caller,
    });
    return { position };
  }
}

@CommandHandler(TransitionDeal)
export class TransitionDealHandler implements ICommandHandler<TransitionDeal> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ dealId, to, caller }: TransitionDeal) {
    const { position, events } = await handleCommand(
      this.store,
      dealStream(dealId),
      dealDecider,
      { type: 'TransitionDeal', data: { dealId, to } },
      {
        now: this.clock.now(),
        metadata: caller,
      },
    );
    return { position, moved: events.length > 0 };
  }
}
