/**
 * Budgets no suite reaches: suites of other things make thousands of calls a minute with one
 * partner (the fuzz test, the races) and many wrong credentials from one address. The suite of the
 * limits themselves (request-limits.e2e-spec) sets its own.
 */
export const UNLIMITED = {
  RATE_LIMIT_PER_MINUTE: '10000000',
  USER_TOKEN_RATE_LIMIT_PER_MINUTE: '10000000',
  AUTH_FAILURES_PER_ADDRESS: '10000000',
  AUTH_FAILURES_PER_ACCOUNT: '10000000',
};
