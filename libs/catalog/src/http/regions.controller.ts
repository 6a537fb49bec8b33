import { NotFound } from '@deals/kernel';
import { Controller, Get, Param } from '@nestjs/common';
import { CatalogQueries } from '../queries/catalog.queries';
import { toRegion } from './region.response';

@Controller('api/v1/regions')
export class RegionsController {
  constructor(private readonly catalog: CatalogQueries) {}

  @Get()
  async list() {
    return { status: 'success', regions: (await this.catalog.regions()).map(toRegion) };
  }

  @Get(':region_id')
  async one(@Param('region_id') regionId: string) {
    const region = await this.catalog.region(regionId);
    if (!region) throw new NotFound(`region ${regionId} not found`);
    return { status: 'success', region: toRegion(region) };
  }
}
