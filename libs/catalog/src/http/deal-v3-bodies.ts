import { Injectable } from '@nestjs/common';
import type { DealDetails } from '../projections/deal-details/deal-details.projection';
import type { RegionView } from '../projections/regions/regions.projection';
import { CatalogLinks } from '../queries/catalog-links';
import type { FieldSelection } from '../queries/v3-query';
import { dealClockFacts } from './deal-v1.answers';
import { toDealV3 } from './deal-v3.answers';

const CAPACITY = 20_000;
const OPEN = Buffer.from('{"deals":[');
const COMMA = Buffer.from(',');

/**
 * Serialised v3 deals, kept per deal and field selection as UTF-8 bytes while nothing they depend
 * on has changed (as {@link DealV1Bodies} does for v1), and v3 list answers assembled from them.
 */
@Injectable()
export class DealV3Bodies {
  private readonly bodies = new Map<string, { key: string; bytes: Buffer }>();

  constructor(private readonly links: CatalogLinks) {}

  /** `{"deals":[...],"next_page":...}`; `fieldsKey` names the selection (the `fields` text). */
  list(
    views: DealDetails[],
    regions: Map<string, RegionView>,
    now: Date,
    selection: FieldSelection | null,
    fieldsKey: string,
    nextPage: string | null,
  ): Buffer {
    const parts: Buffer[] = [OPEN];
    views.forEach((view, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(this.deal(view, regions.get(view.regionId ?? '') ?? null, now, selection, fieldsKey));
    });
    parts.push(Buffer.from(`],"next_page":${JSON.stringify(nextPage)}}`));
    return Buffer.concat(parts);
  }

  private deal(view: DealDetails, region: RegionView | null, now: Date, selection: FieldSelection | null, fieldsKey: string): Buffer {
    const facts = dealClockFacts(view, now);
    const id = `${view._id}|${fieldsKey}`;
    const key = `${view._pos}|${region?._pos}|${facts.state}|${facts.num_left}|${facts.number_sold}`;
    const cached = this.bodies.get(id);
    if (cached?.key === key) return cached.bytes;
    const bytes = Buffer.from(JSON.stringify(toDealV3(view, region, facts, this.links, selection)));
    this.bodies.delete(id);
    if (this.bodies.size >= CAPACITY) this.bodies.delete(this.bodies.keys().next().value!);
    this.bodies.set(id, { key, bytes });
    return bytes;
  }
}
