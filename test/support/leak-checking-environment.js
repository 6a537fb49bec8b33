/**
 * Jest's node environment, failing a suite that leaves something open after its afterAll hooks: a
 * server, socket, child process, worker thread, file watcher or ref'ed timer that keeps the jest
 * worker alive once its suites are done (jest then force-exits the worker, without naming the
 * suite). What stays open is what process.getActiveResourcesInfo() lists (resources keeping the
 * event loop alive, so unref'ed ones are not counted) beyond what was open when the suite's
 * environment was set up: jest's own handles, and anything an earlier suite left, are not counted.
 * Timers that jest itself clears meanwhile would hide a suite's timer from that count, so the
 * timers the suite's code sets are also followed one by one, with where each was set.
 */
const { TestEnvironment } = require('jest-environment-node');
const { relative } = require('node:path');
const workerThreads = require('node:worker_threads');
const { appendFileSync, readFileSync } = require('node:fs');

/** This process's CPU and that of its children it has reaped, in ms (Linux: /proc/self/stat, in 10 ms ticks). */
const cpuMs = () => {
  const own = process.cpuUsage();
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (own.user + own.system) / 1000 + (Number(fields[13]) + Number(fields[14])) * 10;
};

/** How long a suite's resources may take to finish closing after its last afterAll: past it, they are left open. */
const SETTLE_CEILING_MS = 5000;

const countByType = () => {
  const counts = new Map();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
};

// An unref'ed timer: it is not itself a resource that getActiveResourcesInfo lists.
const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The first frame of a stack outside this file and jest's own modules: where a timer was set. */
const whereSet = (stack) =>
  (stack ?? '')
    .split('\n')
    .slice(1)
    .find((line) => !line.includes(__filename) && !/[\\/]node_modules[\\/](jest-|@jest[\\/])/.test(line))
    ?.trim()
    .replace(/^at /, '') ?? 'unknown';

/**
 * The worker threads alive in this process, each with where it was started and whether it is
 * ref'ed. getActiveResourcesInfo() lists none (a ref'ed one keeps the process alive all the same),
 * so the suites' `new Worker()` is followed here: the module is shared by every suite of the process.
 */
const liveWorkers = new Map();
let workersStarted = 0;
if (!workerThreads.Worker.followedByLeakCheck) {
  const Started = workerThreads.Worker;
  workerThreads.Worker = class Worker extends Started {
    static followedByLeakCheck = true;

    constructor(...args) {
      super(...args);
      liveWorkers.set(this, { number: ++workersStarted, setAt: new Error(), ref: true });
      this.once('exit', () => liveWorkers.delete(this));
    }

    ref() {
      super.ref();
      if (liveWorkers.has(this)) liveWorkers.get(this).ref = true;
    }

    unref() {
      super.unref();
      if (liveWorkers.has(this)) liveWorkers.get(this).ref = false;
    }
  };
}

/** The suite this worker ran last: what it left is named if jest has to stop the worker (below). */
let lastSuite;

// jest stops a worker with SIGTERM when it has not ended on its own half a second after its last
// suite (a handle opened after that suite's check, during its teardown); without this the run says
// only that "a worker process has failed to exit gracefully". The signal's default is to end the
// process, which it still does here, after naming what held it.
if (!process.listenerCount('SIGTERM') && process.env.JEST_WORKER_ID) {
  process.once('SIGTERM', () => {
    const left = lastSuite?.leftOpen() ?? [];
    process.stderr.write(
      `\njest stopped worker ${process.env.JEST_WORKER_ID} after ${lastSuite?.suite ?? 'no suite'}: ` +
        `${left.length ? left.join(', ') : 'nothing of that suite'} open; all open: ${process.getActiveResourcesInfo().join(', ')}\n`,
    );
    process.exit(143);
  });
}

// A jest worker (a child process, told by jest to end once its suites are done) leaves through
// process.exit() as soon as its event loop is empty, without Node's full teardown of the process:
// with the ~2 GB heap a worker's suites build up, that teardown took longer than the half second
// jest waits before force-exiting a worker and reporting a leak (its 'exit' event came 1 ms after
// jest's end message, the process itself ended later). Anything that keeps the loop busy still
// keeps the worker alive, so a real leak is still reported (and named, above).
if (typeof process.send === 'function' && process.env.JEST_WORKER_ID) {
  process.once('beforeExit', () => process.exit());
}

class LeakCheckingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.suite = relative(config.projectConfig.rootDir, context.testPath);
    this.timers = new Map();
    for (const name of ['setTimeout', 'setInterval']) {
      const set = this.global[name];
      const timers = this.timers;
      this.global[name] = Object.assign(function (...args) {
        const timer = set.apply(this, args);
        timers.set(timer, new Error());
        return timer;
      }, set);
    }
  }

  async setup() {
    await super.setup();
    this.before = countByType();
    this.workersBefore = workersStarted;
    lastSuite = this;
    if (process.env.TEST_CPU_LOG) this.started = { cpu: cpuMs(), wall: performance.now() };
  }

  async teardown() {
    await super.teardown();
    // With TEST_CPU_LOG set, a line per suite: its CPU (this worker's and its reaped children's) and wall time, in ms.
    if (this.started)
      appendFileSync(
        process.env.TEST_CPU_LOG,
        `${Math.round(cpuMs() - this.started.cpu)}\t${Math.round(performance.now() - this.started.wall)}\t${this.suite}\n`,
      );
  }

  /** What the suite left open, as "2 × TCPWRAP" entries (and where its ref'ed timers were set); empty when nothing. */
  leftOpen() {
    const timersLeft = [];
    for (const [timer, setAt] of this.timers) {
      if (timer._destroyed) this.timers.delete(timer);
      else if (timer.hasRef()) timersLeft.push(whereSet(setAt.stack));
    }
    const counts = countByType();
    counts.set('Timeout', Math.max(counts.get('Timeout') ?? 0, (this.before.get('Timeout') ?? 0) + timersLeft.length));
    const left = [];
    for (const [type, count] of counts) {
      const more = count - (this.before.get(type) ?? 0);
      if (more > 0) left.push(`${more} × ${type}`);
    }
    if (timersLeft.length > 0) left.push(`timers set at ${[...new Set(timersLeft)].join('; ')}`);
    // A thread still running keeps its files open, and the process waits for it when it exits.
    for (const { number, setAt, ref } of liveWorkers.values())
      if (number > this.workersBefore) left.push(`a worker thread${ref ? '' : " (unref'ed)"} started at ${whereSet(setAt.stack)}`);
    return left;
  }

  async handleTestEvent(event, state) {
    if (event.name !== 'run_finish') return;
    const deadline = Date.now() + SETTLE_CEILING_MS;
    let left = this.leftOpen();
    while (left.length > 0 && Date.now() < deadline) {
      await tick(20);
      left = this.leftOpen();
    }
    if (left.length === 0) return;
    const error = new Error(
      `${this.suite} left open after its afterAll hooks: ${left.join(', ')}. ` +
        'Close them in teardown; `npx jest --runInBand --detectOpenHandles ' +
        `${this.suite}\` shows where they were opened.`,
    );
    // The message says it all: this file's frames would only point at the check.
    error.stack = `Error: ${error.message}`;
    state.unhandledErrors.push(error);
  }
}

module.exports = LeakCheckingEnvironment;
