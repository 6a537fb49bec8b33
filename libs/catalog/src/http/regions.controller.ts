import { NotFound } from '@deals/kernel';
import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, CalledBy, PARTNERS } from '@deals/wire';
import { RegionAnswer, RegionListAnswer } from './catalog.answers';
import { CatalogQueries } from '../queries/catalog.queries';
import { toRegion } from './region.answers';

@ApiTags('catalog')
@Controller('api/v1/regions')
export class RegionsController {
  constructor(private readonly catalog: CatalogQueries) {}

  @Get()
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({ summary: 'List the regions', description: 'Every region.' })
  @ApiAnswer(RegionListAnswer)
  async list() {
    return { status: 'success', regions: (await this.catalog.regions()).map(toRegion) };
  }

  @Get(':region_id')
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({ summary: 'Show a region', description: 'One region. Unknown: 404 find_failed.' })
  @ApiAnswer(RegionAnswer, { errors: [404] })
  async one(@Param('region_id') regionId: string) {
    const region = await this.catalog.region(regionId);
    if (!region) throw new NotFound('region not found');
    return { status: 'success', region: toRegion(region) };
  }
}
