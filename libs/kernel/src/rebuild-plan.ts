import type { Projection } from './projection';

/** One process's share of a rebuild: the views it rebuilds and the events of the log it reads for them. */
export interface RebuildPart {
  views: string[];
  events: number;
}

/**
 * Divides the views of a rebuild among `workers` processes, each reading only the events its views
 * handle. A view weighs what its live generation takes in the store (`bytes`, by view name): what
 * rebuilding it writes, and a better measure of its cost than its events (a feed entry weighs more
 * than a coupon); a view the store cannot size, or that holds nothing yet, weighs the events of
 * the log it handles (`counts`, by type) at the sized views' bytes an event. The heaviest is placed
 * first, each with the part that weighs least so far (ties: the earlier part). Deterministic for
 * the same figures; no part is empty (fewer parts than workers when there are fewer views).
 */
export function planRebuild(
  projections: readonly Projection[],
  counts: ReadonlyMap<string, number>,
  workers: number,
  bytes: ReadonlyMap<string, number> = new Map(),
): RebuildPart[] {
  if (!Number.isSafeInteger(workers) || workers < 1) throw new RangeError(`workers must be a whole number of at least 1, not ${workers}`);
  const events = new Map(projections.map((p) => [p.name, eventsHandled([p], counts)]));
  const sized = projections.filter((p) => (bytes.get(p.name) ?? 0) > 0 && events.get(p.name)! > 0);
  const sizedEvents = sized.reduce((n, p) => n + events.get(p.name)!, 0);
  const perEvent = sizedEvents ? sized.reduce((n, p) => n + bytes.get(p.name)!, 0) / sizedEvents : 1;
  const weighed = projections.map((p) => ({ projection: p, weight: bytes.get(p.name) || events.get(p.name)! * perEvent }));
  weighed.sort((a, b) => b.weight - a.weight || (a.projection.name < b.projection.name ? -1 : 1));
  const parts = Array.from({ length: Math.min(workers, weighed.length) }, () => ({ views: [] as Projection[], weight: 0 }));
  for (const view of weighed) {
    const lightest = parts.reduce((min, part) => (part.weight < min.weight ? part : min), parts[0]);
    lightest.views.push(view.projection);
    lightest.weight += view.weight;
  }
  return parts.map((part) => ({ views: part.views.map((p) => p.name), events: eventsHandled(part.views, counts) }));
}

/** The events a set of views reads in a rebuild: each event of a type any of them handles, once. */
export function eventsHandled(projections: readonly Projection[], counts: ReadonlyMap<string, number>): number {
  return [...new Set(projections.flatMap((p) => p.handles))].reduce((n, type) => n + (counts.get(type) ?? 0), 0);
}
