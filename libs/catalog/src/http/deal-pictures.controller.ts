import { NotFound, RecentMap } from '@deals/kernel';
import { ApiErrors, CalledBy } from '@deals/wire';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CatalogQueries } from '../queries/catalog.queries';
import { dealPicture, PICTURE_DIMENSIONS } from './deal-picture';
import { IMAGE_SIZES } from './deal-v1.answers';

/** Every size a deal's links name: the v1 `primary_image` sizes, and the v3 `images` `small`, which v1 has not. */
const SIZES: Record<string, string> = { ...IMAGE_SIZES, small: '300x180' };

/** Pictures kept drawn: the catalogue's first page at a few sizes. */
const KEPT_PICTURES = 512;

/**
 * The pictures of deals, drawn by the service (`deal-picture.ts`) at every size a deal's
 * `primary_image` names: what `image_url_abs` points at when `IMAGE_BASE_URL` is this service (the
 * default with the demo data). Public (wire PUBLIC_PATHS), as images on a page are.
 */
@ApiTags('catalog')
@Controller()
export class DealPicturesController {
  private readonly drawn = new RecentMap<string, Buffer>(KEPT_PICTURES);

  constructor(private readonly catalog: CatalogQueries) {}

  @Get('images/deals/:file')
  @CalledBy('anyone')
  @ApiOperation({ summary: "A deal's picture", description: 'Public. `<deal_id>.png`, 700x420. Unknown deal: 404.' })
  @ApiResponse({ status: 200, description: 'the picture', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors(404)
  picture(@Param('file') file: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    return this.answer(file, PICTURE_DIMENSIONS, reply);
  }

  @Get('images/deals/:size/:file')
  @CalledBy('anyone')
  @ApiOperation({
    summary: "A deal's picture at a size",
    description: `Public. \`<size>/<deal_id>.png\`, a size a deal's \`primary_image\` or \`images\` names (${Object.keys(SIZES).join(', ')}). Unknown deal or size: 404.`,
  })
  @ApiResponse({ status: 200, description: 'the picture', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors(404)
  sized(@Param('size') size: string, @Param('file') file: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    const dimensions = Object.hasOwn(SIZES, size) ? SIZES[size] : null;
    if (!dimensions) throw new NotFound('size: no such picture size');
    return this.answer(file, dimensions, reply);
  }

  private async answer(file: string, dimensions: string, reply: FastifyReply): Promise<Buffer> {
    const dealId = /^(.+)\.png$/.exec(file)?.[1];
    const deal = dealId === undefined ? null : await this.catalog.deal(dealId);
    if (!deal?.deal) throw new NotFound('file: no such picture');
    const key = `${dimensions}/${dealId}`;
    let png = this.drawn.get(key);
    if (!png) this.drawn.set(key, (png = dealPicture(dealId!, deal.deal.category ?? '', dimensions)));
    // A deal's picture never changes: kept by browsers and proxies for a day.
    void reply.type('image/png').header('cache-control', 'public, max-age=86400');
    return png;
  }
}
