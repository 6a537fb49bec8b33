import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { compiledEntry } from './compiled-service';

const ROOT = join(__dirname, '..', '..');

/** The worker (projections and jobs) as its own process (its sources, compiled once: compiled-service.ts): killable like a real one. */
export class WorkerProcess {
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
  }

  /** Starts it and awaits its "running" line (its views defined, projections and jobs started). */
  static async start(dataDir: string, env: Record<string, string>): Promise<WorkerProcess> {
    const child = spawn(process.execPath, [compiledEntry('apps/worker/src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', DEMO_DATA: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(child);
    await new Promise<void>((started, failed) => {
      const end = (error?: Error) => {
        clearTimeout(hung);
        child.stdout!.off('data', read);
        child.stderr!.off('data', read);
        child.off('exit', exited);
        if (error) failed(error);
        else started();
      };
      const read = () => {
        if (worker.output.includes('deals worker running')) end();
      };
      const exited = () => end(new Error(`the worker exited as it started:\n${worker.output.slice(-2000)}`));
      const hung = setTimeout(() => end(new Error(`the worker did not start within 60 s:\n${worker.output.slice(-2000)}`)), 60_000);
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.once('exit', exited);
    });
    return worker;
  }

  /** The exit code once it has exited (null while it runs, or when a signal ended it). */
  get exitCode(): number | null {
    return this.child.exitCode;
  }

  /** Everything it wrote (stdout and stderr), to see why it failed. */
  get log(): string {
    return this.output;
  }

  /** Freezes it (SIGSTOP) until {@link resume}: alive to the operating system, doing nothing. */
  freeze(): void {
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  kill(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}
