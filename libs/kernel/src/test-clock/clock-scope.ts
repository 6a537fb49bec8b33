import { AsyncLocalStorage } from 'node:async_hooks';
import { Clock } from '../ports/clock.port';
import { testClockOf } from '../sandbox';

/** The test clock whose time the work under way keeps: a call made under it, or a job it runs as it advances. */
export interface TestClockScope {
  clockId: string;
  /** The partner id the work acts as (`underTestClock`). */
  partnerId: string;
  /** The clock's instant: frozen for a call, a job's due time while it advances. */
  at: Date;
}

const scopes = new AsyncLocalStorage<TestClockScope>();

/** Runs `work` (and everything it awaits or starts) in the test clock's time. */
export const inTestClock = <T>(scope: TestClockScope, work: () => T): T => scopes.run(scope, work);

/** The test clock the work under way keeps time by, if any. */
export const currentTestClock = (): TestClockScope | undefined => scopes.getStore();

/**
 * The service's clock, which tells a test clock's time to work done under one (a sandbox's calls
 * made with its header, its jobs as it advances) and the real time to everything else.
 */
export class TestClockAwareClock extends Clock {
  /** `real`: the clock of everything not under a test clock. */
  constructor(readonly real: Clock) {
    super();
  }

  now(): Date {
    const scope = scopes.getStore();
    return scope ? new Date(scope.at.getTime()) : this.real.now();
  }
}

/** Real time, whatever test clock work under way keeps (`clock` the service's). */
export const realClockOf = (clock: Clock): Clock => (clock instanceof TestClockAwareClock ? clock.real : clock);

/**
 * Whether work under way keeps the time of what `partnerId` owns: work under a test clock that
 * clock's world only, other work everything but test clocks' worlds (their time is not real time).
 */
export function keepsTimeOf(partnerId: string): boolean {
  const scope = scopes.getStore();
  return scope ? scope.partnerId === partnerId : testClockOf(partnerId) === null;
}
