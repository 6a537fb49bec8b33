import type { LogPosition } from './ports/event-store.port';

/**
 * Read your writes: a call's response waits until the views it reads include the call's own
 * events. The wait is bounded; past it the response goes out with what the views hold.
 */
export abstract class ViewProgress {
  abstract waitFor(collections: string[], position: LogPosition | null): Promise<void>;
}

/** Who caused a command: goes into every event's metadata. */
export interface CommandCaller {
  partnerId?: string;
  actor: string;
  requestId?: string;
  correlationId?: string;
}

export const OPERATOR: CommandCaller = { actor: 'operator' };
