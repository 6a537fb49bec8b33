import { Map as ImmutableMap } from 'immutable';
import type { Decider, DomainCommand, DomainEvent } from '../decider';
import { NotFound, ValidationFailed } from '../errors';
import { loadCachedAggregate } from '../handle-command';
import type { EventStore } from '../ports/event-store.port';
import type { ScheduledJob } from '../ports/scheduler.port';
import { testClockOf } from '../sandbox';
import { currentTestClock, inTestClock } from './clock-scope';

/**
 * A sandbox's test clock: an instant that stands still until the partner moves it forward. The jobs
 * armed under it (a hold's release, a batch's sending, ...) wait on its stream, not on the service's
 * scheduler, and run in order, each at its own instant, when an advance passes them.
 */
export type TestClockCreated = DomainEvent<
  'TestClockCreated',
  { clockId: string; partnerId: string; name: string | null; frozenTime: string; createdAt: string }
>;
/** An advance began: the clock moves to `to` as its jobs due by then run. */
export type TestClockAdvancing = DomainEvent<'TestClockAdvancing', { clockId: string; from: string; to: string }>;
/** A job armed under the clock (`seq`: the arming's number, so that a job armed again while it runs is kept). */
export type TestClockJobArmed = DomainEvent<'TestClockJobArmed', { clockId: string; seq: number; job: ArmedJob }>;
export type TestClockJobCancelled = DomainEvent<'TestClockJobCancelled', { clockId: string; jobId: string }>;
/** A job ran at `at` (the clock's time then), or failed with `failed`: either way it is done. */
export type TestClockJobRan = DomainEvent<'TestClockJobRan', { clockId: string; jobId: string; seq: number; at: string; failed?: string }>;
/** Every job due by the advance's end ran: the clock stands at `frozenTime`. */
export type TestClockReady = DomainEvent<'TestClockReady', { clockId: string; frozenTime: string }>;
/**
 * A write under the clock recorded a money line dated `at` (the clock's time it keeps): written in
 * the same unit as that line, so an advance is ordered after it, or it is refused (see `RecordClockWrite`).
 */
export type TestClockWriteRecorded = DomainEvent<'TestClockWriteRecorded', { clockId: string; at: string }>;
/** The sandbox deleted the clock: no call acts under it again, and its jobs never run. */
export type TestClockDeleted = DomainEvent<'TestClockDeleted', { clockId: string; partnerId: string }>;

export type TestClockEvent =
  | TestClockCreated
  | TestClockAdvancing
  | TestClockJobArmed
  | TestClockJobCancelled
  | TestClockJobRan
  | TestClockReady
  | TestClockWriteRecorded
  | TestClockDeleted;

/** A job as the clock's stream keeps it: its due time as text. */
export interface ArmedJob {
  id: string;
  kind: string;
  runAt: string;
  data: Record<string, unknown>;
}

export type CreateTestClock = DomainCommand<'CreateTestClock', Omit<TestClockCreated['data'], 'createdAt'>>;
export type AdvanceTestClock = DomainCommand<'AdvanceTestClock', { clockId: string; to: string }>;
export type ArmClockJob = DomainCommand<'ArmClockJob', { clockId: string; job: ScheduledJob }>;
export type CancelClockJob = DomainCommand<'CancelClockJob', { clockId: string; jobId: string }>;
export type RecordClockJobRan = DomainCommand<
  'RecordClockJobRan',
  { clockId: string; jobId: string; seq: number; at: string; failed?: string }
>;
export type FinishClockAdvance = DomainCommand<'FinishClockAdvance', { clockId: string }>;
export type DeleteTestClock = DomainCommand<'DeleteTestClock', { clockId: string }>;
/**
 * A write dated `at` under the clock: refused once the clock's time is past `at` (it moved while
 * the call ran, and a day it dates may be closed already), else recorded on the clock's stream.
 */
export type RecordClockWrite = DomainCommand<'RecordClockWrite', { clockId: string; at: string }>;
export type TestClockCommand =
  | CreateTestClock
  | AdvanceTestClock
  | ArmClockJob
  | CancelClockJob
  | RecordClockJobRan
  | FinishClockAdvance
  | RecordClockWrite
  | DeleteTestClock;

export interface PendingJob extends ArmedJob {
  seq: number;
}

export interface TestClock {
  created: boolean;
  /** Deleted by its sandbox: it takes no job and no advance again. */
  deleted: boolean;
  partnerId: string | null;
  name: string | null;
  frozenTime: string | null;
  createdAt: string | null;
  status: 'ready' | 'advancing';
  /** Where the advance under way began and ends. */
  from: string | null;
  target: string | null;
  seq: number;
  /** Jobs armed and not run nor cancelled, by id (a persistent map: an arming or a run is one entry, however many wait). */
  pending: ImmutableMap<string, PendingJob>;
}

export const testClockStream = (clockId: string) => `testclock-${clockId}`;

/** The furthest one advance may move a clock: two years, as far as a deal's coupons usually run. */
export const MAX_ADVANCE_MS = 2 * 366 * 24 * 3_600_000;

const invalid = (field: string, message: string) => new ValidationFailed([{ type: 'invalid', resource: 'test_clock', field, message }]);

/** A write dated before the clock's time, refused (see `RecordClockWrite`): the call is made again. */
export class TestClockMoved extends ValidationFailed {
  constructor() {
    super(
      [{ type: 'invalid', resource: 'test_clock', field: 'frozen_time', message: 'moved while this call ran: make the call again' }],
      'the test clock moved while this call ran: make the call again',
    );
  }
}

/** The next job an advance runs: the earliest due by its end (armed first among equals); none when all ran. */
export function nextDueJob(clock: TestClock): PendingJob | null {
  if (clock.status !== 'advancing' || clock.target === null) return null;
  const target = Date.parse(clock.target);
  let next: PendingJob | null = null;
  for (const job of clock.pending.values()) {
    const due = Date.parse(job.runAt);
    if (due > target) continue;
    if (!next || due < Date.parse(next.runAt) || (due === Date.parse(next.runAt) && job.seq < next.seq)) next = job;
  }
  return next;
}

export const testClockDecider: Decider<TestClock, TestClockCommand, TestClockEvent> = {
  initialState: () => ({
    created: false,
    deleted: false,
    partnerId: null,
    name: null,
    frozenTime: null,
    createdAt: null,
    status: 'ready',
    from: null,
    target: null,
    seq: 0,
    pending: ImmutableMap(),
  }),

  decide(command, clock, now) {
    if (command.type === 'CreateTestClock') {
      if (clock.created) return [];
      if (!Number.isFinite(Date.parse(command.data.frozenTime))) throw invalid('frozen_time', 'must be a date and time');
      return [{ type: 'TestClockCreated', data: { ...command.data, createdAt: now.toISOString() } }];
    }
    const { clockId } = command.data;
    if (!clock.created || (clock.deleted && command.type === 'AdvanceTestClock')) throw new NotFound('test clock not found');
    // A deleted clock's world is gone: what is armed, cancelled or run under it since changes nothing.
    if (clock.deleted) return [];
    switch (command.type) {
      case 'DeleteTestClock':
        return [{ type: 'TestClockDeleted', data: { clockId, partnerId: clock.partnerId! } }];
      case 'AdvanceTestClock': {
        if (clock.status === 'advancing') throw invalid('status', 'is advancing: wait until it is ready');
        const to = Date.parse(command.data.to);
        const from = Date.parse(clock.frozenTime!);
        if (!Number.isFinite(to)) throw invalid('frozen_time', 'must be a date and time');
        // eslint-disable-next-line no-restricted-syntax -- the clock's own time
        if (to <= from) throw invalid('frozen_time', `must be after the clock's time, ${clock.frozenTime}`);
        if (to - from > MAX_ADVANCE_MS) throw invalid('frozen_time', 'must be at most two years after the clock’s time: advance in steps');
        return [{ type: 'TestClockAdvancing', data: { clockId, from: clock.frozenTime!, to: new Date(to).toISOString() } }];
      }
      case 'ArmClockJob': {
        const { id, kind, runAt, data } = command.data.job;
        return [{ type: 'TestClockJobArmed', data: { clockId, seq: clock.seq + 1, job: { id, kind, runAt: runAt.toISOString(), data } } }];
      }
      case 'CancelClockJob':
        return clock.pending.has(command.data.jobId) ? [{ type: 'TestClockJobCancelled', data: command.data }] : [];
      case 'RecordClockJobRan': {
        const { jobId, seq, at, failed } = command.data;
        return [{ type: 'TestClockJobRan', data: { clockId, jobId, seq, at, ...(failed === undefined ? {} : { failed }) } }];
      }
      case 'RecordClockWrite':
        // The clock's time only grows: once past `at`, a statement may have closed the day `at` falls on.
        if (Date.parse(clock.frozenTime!) > Date.parse(command.data.at)) throw new TestClockMoved();
        return [{ type: 'TestClockWriteRecorded', data: { clockId, at: command.data.at } }];
      case 'FinishClockAdvance':
        if (clock.status !== 'advancing' || nextDueJob(clock)) return [];
        return [{ type: 'TestClockReady', data: { clockId, frozenTime: clock.target! } }];
    }
  },

  evolve(clock, event) {
    switch (event.type) {
      case 'TestClockCreated': {
        const { partnerId, name, frozenTime, createdAt } = event.data;
        return { ...clock, created: true, partnerId, name, frozenTime, createdAt };
      }
      case 'TestClockAdvancing':
        return { ...clock, status: 'advancing', from: event.data.from, target: event.data.to };
      case 'TestClockJobArmed':
        return {
          ...clock,
          seq: event.data.seq,
          pending: clock.pending.set(event.data.job.id, { ...event.data.job, seq: event.data.seq }),
        };
      case 'TestClockJobCancelled':
        return { ...clock, pending: clock.pending.delete(event.data.jobId) };
      case 'TestClockJobRan': {
        // The clock's time passes through each job's instant; a job armed again while it ran stays.
        const kept = clock.pending.get(event.data.jobId);
        const pending = kept && kept.seq === event.data.seq ? clock.pending.delete(event.data.jobId) : clock.pending;
        const later = Date.parse(event.data.at) > Date.parse(clock.frozenTime!) ? event.data.at : clock.frozenTime;
        return { ...clock, pending, frozenTime: later };
      }
      case 'TestClockReady':
        return { ...clock, status: 'ready', from: null, target: null, frozenTime: event.data.frozenTime };
      case 'TestClockWriteRecorded':
        return clock;
      case 'TestClockDeleted':
        return { ...clock, deleted: true, status: 'ready', from: null, target: null, pending: ImmutableMap() };
    }
  },
};

/** Carries a test clock's advance out where jobs run (the scheduler that keeps clocks' jobs). */
export abstract class TestClockRunner {
  abstract advanceSoon(clockId: string, to: string): Promise<void>;
  /**
   * Has every advance run the jobs of `kind` once more at its end, in the clock's time: for the work
   * real time does by sweeps (recording the coupons that expired, the daily emails), which a clock
   * does not arm. The job's `runAt` is where the advance ends, its `data.from` where it began.
   */
  abstract sweepAtEachAdvance(kind: string): void;
}

/**
 * Runs `work` in the time of the world `partnerId` names: a test clock's where that clock stands
 * (work done for it out of its advances, such as finishing what a stop interrupted), or as it is
 * for any other partner (or none).
 */
export async function inTimeOf<T>(store: EventStore, partnerId: string | undefined, work: () => Promise<T>): Promise<T> {
  const clockId = partnerId === undefined ? null : testClockOf(partnerId);
  if (clockId === null || currentTestClock()?.clockId === clockId) return work();
  const { state } = await loadCachedAggregate(store, testClockStream(clockId), testClockDecider);
  if (!state.frozenTime) return work();
  return inTestClock({ clockId, partnerId: partnerId!, at: new Date(state.frozenTime) }, work);
}
