/**
 * A partner's sandbox is an account of its own, named after the live partner's id: its test
 * credentials authenticate as it, so everything a partner owns (users, cards, purchases, coupons,
 * card links, batches, events, webhooks, statements) is kept apart by the partner id alone. What
 * every live partner shares (a deal's inventory, its card-link places) is kept apart by
 * {@link sandboxScoped}.
 */
const SANDBOX_SUFFIX = '_test';

/** The sandbox account of a live partner. */
export const sandboxOf = (livePartnerId: string): string => `${livePartnerId}${SANDBOX_SUFFIX}`;

/** Whether a partner id names a sandbox (live partner ids are UUIDs, which never end so). */
export const isSandbox = (partnerId: string | undefined | null): boolean =>
  typeof partnerId === 'string' && partnerId.endsWith(SANDBOX_SUFFIX);

/** The live partner a sandbox belongs to; a live id is its own. */
export const livePartnerOf = (partnerId: string): string => (isSandbox(partnerId) ? partnerId.slice(0, -SANDBOX_SUFFIX.length) : partnerId);

/**
 * A stream every live partner shares (a deal's inventory, its card-link places), as seen by
 * `partnerId`: the stream itself for a live partner or none, a copy of the sandbox's own for a
 * sandbox, so that test purchases never take live units.
 */
export const sandboxScoped = (stream: string, partnerId: string | undefined | null): string =>
  isSandbox(partnerId) ? `${stream}~${partnerId}` : stream;
