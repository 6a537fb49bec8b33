/** One flush of a process's counts: per partner, day (UTC, `YYYY-MM-DD`) and answer status, and keys' last use. */
export interface UsageDelta {
  /** Requests answered, to add to the stored counts. */
  requests: Array<{ partnerId: string; day: string; status: number; count: number }>;
  /** When each credential was last used, to the minute (ms since 1970, a whole minute): kept when later than the stored one. */
  lastUsed: Array<{ partnerId: string; credentialId: string; minute: number }>;
}

/** A partner's requests on one day, by answer status. */
export interface DailyUsage {
  day: string;
  byStatus: Record<string, number>;
}

/**
 * How much each partner used the API and when each of its credentials was last used: operational
 * figures for its administrators (not facts for the event log). Processes count in memory and
 * {@link UsageStore.add} their counts every few seconds; every process of the service sees the sums.
 */
export abstract class UsageStore {
  /** Adds one flush; durable once the promise resolves. */
  abstract add(delta: UsageDelta): Promise<void>;

  /** The partner's counts for each day asked (days with none are left out). */
  abstract dailyUsage(partnerId: string, days: readonly string[]): Promise<DailyUsage[]>;

  /** When each credential of the partner was last used (minute, ms since 1970); credentials never used are absent. */
  abstract lastUsed(partnerId: string): Promise<Record<string, number>>;

  /** Forgets request counts of days before `day`. */
  abstract purgeBefore(day: string): Promise<void>;

  abstract close(): Promise<void>;
}
