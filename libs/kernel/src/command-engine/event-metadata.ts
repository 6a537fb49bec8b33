import type { CommandContext } from './command';
import { EventMetadata } from '../ports/event-store.port';

/**
 * The events' metadata of a command context: the fields of `EventMetadata` the caller gave, and the
 * time. Copied field by field (an object spread of the caller is far slower, on the purchase path),
 * which also keeps anything else a caller object carries out of the log.
 */
export function metadataFrom({ metadata: m, now }: CommandContext): EventMetadata {
  const metadata: EventMetadata = { occurredAt: now.toISOString() };
  if (m.partnerId !== undefined) metadata.partnerId = m.partnerId;
  if (m.actor !== undefined) metadata.actor = m.actor;
  if (m.requestId !== undefined) metadata.requestId = m.requestId;
  if (m.correlationId !== undefined) metadata.correlationId = m.correlationId;
  if (m.causationId !== undefined) metadata.causationId = m.causationId;
  return metadata;
}

/**
 * Contexts seen lately, with the metadata made for them (a bound, not a cache to keep: cleared
 * when full). A purchase uses three contexts, so this holds those of the purchases in flight.
 */
export const RECENT_CONTEXTS = 1024;
const recentContexts = new Map<CommandContext, { time: number; given: CommandContext['metadata']; metadata: EventMetadata }>();

/**
 * The events' metadata of a command context (`metadataFrom`): one object for all the commands
 * given the same context, while its time and caller object are the same ones (a caller's fields are
 * not changed once given). A purchase sends up to three commands with one context at once; their
 * events then share one metadata object, which the event store may encode once for them all.
 */
export function metadataOf(context: CommandContext): EventMetadata {
  const known = recentContexts.get(context);
  const time = context.now.getTime();
  if (known && known.time === time && known.given === context.metadata) return known.metadata;
  const metadata = metadataFrom(context);
  if (recentContexts.size >= RECENT_CONTEXTS) recentContexts.clear();
  recentContexts.set(context, { time, given: context.metadata, metadata });
  return metadata;
}
