/**
 * A partner's sandbox is an account of its own, named after the live partner's id: its test
 * credentials authenticate as it, so everything a partner owns (users, cards, purchases, coupons,
 * card links, batches, events, webhooks, statements) is kept apart by the partner id alone. What
 * every live partner shares (a deal's inventory, its card-link places) is kept apart by
 * {@link sandboxScoped}.
 *
 * A test clock of a sandbox is, in the same way, a world of its own inside it (`<sandbox>~<clock>`):
 * the calls made under the clock act as that id, in the clock's time, so that moving the clock
 * moves everything made under it and nothing else.
 */
const SANDBOX_SUFFIX = '_test';
/** Between a sandbox's id and its test clock's in the partner id of the clock's world. */
export const CLOCK_SEPARATOR = '~';
const SANDBOX_ID = /_test(~[A-Za-z0-9_-]+)?$/;

/** The sandbox account of a live partner. */
export const sandboxOf = (livePartnerId: string): string => `${livePartnerId}${SANDBOX_SUFFIX}`;

/** Whether a partner id names a sandbox, or a test clock's world in one (live partner ids are UUIDs, which never end so). */
export const isSandbox = (partnerId: string | undefined | null): boolean => typeof partnerId === 'string' && SANDBOX_ID.test(partnerId);

/** The partner id of the calls made under a sandbox's test clock. */
export const underTestClock = (sandboxId: string, clockId: string): string => `${sandboxId}${CLOCK_SEPARATOR}${clockId}`;

/** The test clock a partner id acts under; null for a live partner or a sandbox's own calls. */
export function testClockOf(partnerId: string): string | null {
  const at = partnerId.lastIndexOf(CLOCK_SEPARATOR);
  return at < 0 || !isSandbox(partnerId) ? null : partnerId.slice(at + 1);
}

/** The account a partner id belongs to: a test clock's world is its sandbox's. */
export const accountOf = (partnerId: string): string => {
  const clock = testClockOf(partnerId);
  return clock === null ? partnerId : partnerId.slice(0, -(clock.length + CLOCK_SEPARATOR.length));
};

/** The live partner a sandbox (or a test clock's world in it) belongs to; a live id is its own. */
export const livePartnerOf = (partnerId: string): string => {
  const account = accountOf(partnerId);
  return isSandbox(account) ? account.slice(0, -SANDBOX_SUFFIX.length) : account;
};

/**
 * A stream every live partner shares (a deal's inventory, its card-link places), as seen by
 * `partnerId`: the stream itself for a live partner or none, a copy of the sandbox's own for a
 * sandbox (or a test clock's), so that test purchases never take live units.
 */
export const sandboxScoped = (stream: string, partnerId: string | undefined | null): string =>
  isSandbox(partnerId) ? `${stream}~${partnerId}` : stream;
