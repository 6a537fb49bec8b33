/** How long the main thread's event loop was held at once, while something ran (a bench's request). */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoopBlock {
  /** The longest delay of the loop's timers, in ms (perf_hooks' monitorEventLoopDelay): what another request waited at most, the machine's own waits included. */
  delayMs: number;
  /** The most CPU the main thread spent between two turns of a 1 ms timer, in ms: the longest work it did at once, whatever else the machine ran. */
  cpuMs: number;
}

/** Node's own (24) CPU time of this thread alone, which the installed type definitions do not declare yet. */
const threadCpu = process as unknown as { threadCpuUsage(): NodeJS.CpuUsage };

const cpuMsOf = () => {
  const { user, system } = threadCpu.threadCpuUsage();
  return (user + system) / 1000;
};

/** Runs `work`, watching the main thread's loop meanwhile. */
export async function watchLoop<T>(work: () => Promise<T>): Promise<{ result: T; block: LoopBlock }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  let cpuMs = 0;
  let last = cpuMsOf();
  const timer = setInterval(() => {
    const now = cpuMsOf();
    cpuMs = Math.max(cpuMs, now - last);
    last = now;
  }, 1);
  delay.enable();
  try {
    const result = await work();
    cpuMs = Math.max(cpuMs, cpuMsOf() - last);
    return { result, block: { delayMs: delay.max / 1e6, cpuMs } };
  } finally {
    delay.disable();
    clearInterval(timer);
  }
}
