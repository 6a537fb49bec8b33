import { Clock, NotFound } from '@deals/kernel';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, CalledBy, PARTNERS } from '@deals/wire';
import { DealAnswer } from './catalog.answers';
import type { FastifyReply } from 'fastify';
import { CatalogQueries } from '../queries/catalog.queries';
import { DealV1Bodies } from './deal-v1-bodies';

@ApiTags('catalog')
@Controller()
export class DealsController {
  constructor(
    private readonly catalog: CatalogQueries,
    private readonly clock: Clock,
    private readonly bodies: DealV1Bodies,
  ) {}

  @Get(['deals/:deal_id', 'v1/deals/:deal_id'])
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({
    summary: 'Show a deal',
    description: 'The whole v1 deal (a `.json` suffix on the id is accepted). Unknown: 404 find_failed.',
  })
  @ApiAnswer(DealAnswer, { errors: [404] })
  async one(@Param('deal_id') dealId: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const view = await this.catalog.deal(dealId.replace(/\.json$/, ''));
    if (!view) throw new NotFound('deal not found');
    const region = await this.catalog.region(view.deal!.region_id);
    void reply.type('application/json; charset=utf-8');
    return this.bodies.one(view, region, this.clock.now());
  }
}
