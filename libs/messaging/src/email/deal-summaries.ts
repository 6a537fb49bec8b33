import { CatalogLinks, CatalogQueries, dealClockFacts, DealDetails, toDealV1 } from '@deals/catalog';
import { Injectable } from '@nestjs/common';
import type { DealSummary } from './deal-email';

/** A deal as the emails show it, from the catalogue's v1 deal (its image and page links included). */
@Injectable()
export class DealSummaries {
  constructor(
    private readonly catalog: CatalogQueries,
    private readonly links: CatalogLinks,
  ) {}

  async of(view: DealDetails, now: Date): Promise<DealSummary> {
    const region = view.regionId ? await this.catalog.region(view.regionId) : null;
    const deal = toDealV1(view, region, dealClockFacts(view, now), this.links) as {
      title: string;
      image_url_abs: string;
      current_price: number;
      value: number;
      fine_print?: string;
      show_url: string;
    };
    return {
      title: deal.title,
      imageUrl: deal.image_url_abs,
      price: deal.current_price,
      value: deal.value,
      finePrint: deal.fine_print ?? null,
      showUrl: deal.show_url,
    };
  }
}
