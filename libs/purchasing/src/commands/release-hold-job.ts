/** The scheduled job that releases a hold at its expiry. */
export const RELEASE_HOLD_JOB = 'release-hold';
export const releaseHoldJobId = (holdId: string) => `release-hold-${holdId}`;
