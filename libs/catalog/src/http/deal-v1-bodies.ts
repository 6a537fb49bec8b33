import { Injectable } from '@nestjs/common';
import type { DealDetails } from '../projections/deal-details/deal-details.projection';
import type { RegionView } from '../projections/regions/regions.projection';
import { CatalogLinks } from '../queries/catalog-links';
import { dealClockFacts, toDealV1 } from './deal-v1.response';

const CAPACITY = 5000;

/**
 * The serialised `GET /deals/:id` answer, kept per deal and reused while nothing it depends on has
 * changed: the deal view and region view (by the log position each last applied) and the facts the
 * clock changes. Serialising a deal's five kilobytes took as long as everything else in the route.
 */
@Injectable()
export class DealV1Bodies {
  private readonly bodies = new Map<string, { key: string; json: string }>();

  constructor(private readonly links: CatalogLinks) {}

  json(view: DealDetails, region: RegionView | null, now: Date): string {
    const facts = dealClockFacts(view, now);
    const key = `${view._pos}|${region?._pos}|${facts.state}|${facts.ended}|${facts.num_left}|${facts.number_sold}|${facts.purchasable_number}`;
    const cached = this.bodies.get(view._id);
    if (cached?.key === key) return cached.json;
    const json = JSON.stringify({ status: 'success', deal: toDealV1(view, region, facts, this.links) });
    this.bodies.delete(view._id);
    if (this.bodies.size >= CAPACITY) this.bodies.delete(this.bodies.keys().next().value!);
    this.bodies.set(view._id, { key, json });
    return json;
  }
}
