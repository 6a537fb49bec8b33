import { Clock, NotFound } from '@deals/kernel';
import { Controller, Get, Param } from '@nestjs/common';
import { CatalogLinks } from '../queries/catalog-links';
import { CatalogQueries } from '../queries/catalog.queries';
import { toDealV1 } from './deal-v1.response';

@Controller()
export class DealsController {
  constructor(private readonly catalog: CatalogQueries, private readonly clock: Clock, private readonly links: CatalogLinks) {}

  @Get(['deals/:deal_id', 'v1/deals/:deal_id'])
  async one(@Param('deal_id') dealId: string) {
    const view = await this.catalog.deal(dealId.replace(/\.json$/, ''));
    if (!view) throw new NotFound(`deal ${dealId} not found`);
    const region = await this.catalog.region(view.deal!.region_id);
    return { status: 'success', deal: toDealV1(view, region, this.clock.now(), this.links) };
  }
}
