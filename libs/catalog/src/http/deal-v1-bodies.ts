import { Injectable } from '@nestjs/common';
import type { DealDetails } from '../projections/deal-details/deal-details.projection';
import type { RegionView } from '../projections/regions/regions.projection';
import { CatalogLinks } from '../queries/catalog-links';
import { dealClockFacts, toDealV1 } from './deal-v1.answers';

const CAPACITY = 20_000;
const LIST_OPEN = Buffer.from('{"status":"success","deals":[');
const COMMA = Buffer.from(',');
const LIST_CLOSE = Buffer.from(']}');

/**
 * Serialised v1 deals, kept per deal as UTF-8 bytes and reused while nothing they depend on has
 * changed: the deal view and region view (by the log position each last applied) and the facts the
 * clock changes. Answers are assembled from these bytes: serialising, measuring and encoding five
 * kilobytes a deal took as long as everything else in the deal routes.
 */
@Injectable()
export class DealV1Bodies {
  private readonly bodies = new Map<string, { key: string; json: string; bytes: Buffer }>();

  constructor(private readonly links: CatalogLinks) {}

  /**
   * `{"status":"success","deal":...}` for one deal, as text: a small answer goes out with its
   * headers in one write, where a Buffer costs a second socket write (and TLS record).
   */
  one(view: DealDetails, region: RegionView | null, now: Date): string {
    return `{"status":"success","deal":${this.entry(view, region, now).json}}`;
  }

  /**
   * `{"status":"success","deals":[...]}` for a list. `bought`: for a list made for one user, the
   * units it bought of each deal; a deal with a `max_per_user` then shows what is left of it for
   * that user as its `purchasable_number`.
   */
  list(views: DealDetails[], regions: Map<string, RegionView>, now: Date, bought?: ReadonlyMap<string, number>): Buffer {
    const parts: Buffer[] = [LIST_OPEN];
    views.forEach((view, i) => {
      if (i > 0) parts.push(COMMA);
      const region = regions.get(view.regionId ?? '') ?? null;
      const units = bought?.get(view._id) ?? 0;
      const limit = view.deal?.max_per_user;
      if (units > 0 && typeof limit === 'number') {
        const body = JSON.parse(this.entry(view, region, now).json) as { purchasable_number: number };
        body.purchasable_number = Math.max(0, Math.min(body.purchasable_number, limit - units));
        parts.push(Buffer.from(JSON.stringify(body)));
      } else parts.push(this.deal(view, region, now));
    });
    parts.push(LIST_CLOSE);
    return Buffer.concat(parts);
  }

  /** One deal in the v1 shape, serialised. */
  deal(view: DealDetails, region: RegionView | null, now: Date): Buffer {
    return this.entry(view, region, now).bytes;
  }

  private entry(view: DealDetails, region: RegionView | null, now: Date): { key: string; json: string; bytes: Buffer } {
    const facts = dealClockFacts(view, now);
    const key = `${view._pos}|${region?._pos}|${facts.state}|${facts.ended}|${facts.num_left}|${facts.number_sold}|${facts.purchasable_number}`;
    const cached = this.bodies.get(view._id);
    if (cached?.key === key) return cached;
    const json = JSON.stringify(toDealV1(view, region, facts, this.links));
    const entry = { key, json, bytes: Buffer.from(json) };
    this.bodies.delete(view._id);
    if (this.bodies.size >= CAPACITY) this.bodies.delete(this.bodies.keys().next().value!);
    this.bodies.set(view._id, entry);
    return entry;
  }
}
