import { Scheduler } from '@deals/kernel';
import { JobList, listJobs, localApiUrl, operatorPassword, runningApiAddress, ServiceConfig } from '@deals/runtime';
import { OPERATOR_USERNAME } from '@deals/wire';
import { Command, CommandRunner, Option } from 'nest-commander';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

@Command({
  name: 'jobs:list',
  description:
    "list the scheduled jobs, soonest first, with their state: the queue's on Redis, or the timers of the embedded API running on this data folder (asked over HTTPS)",
})
export class JobsListCommand extends CommandRunner {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly config: ServiceConfig,
  ) {
    super();
  }

  async run(_: string[], options: { limit?: number; json?: boolean }): Promise<void> {
    const limit = options.limit ?? 100;
    const list = this.config.redisUrl ? await listJobs(this.scheduler, limit) : await this.fromEmbeddedApi(limit);
    if (options.json) return void process.stdout.write(`${JSON.stringify(list)}\n`);
    const { waiting, due, running, failed } = list.counts;
    process.stdout.write(`jobs (${list.backend}): ${waiting} waiting, ${due} due, ${running} running, ${failed} failed\n`);
    for (const job of list.jobs)
      process.stdout.write(
        `${job.runAt}  ${job.state.padEnd(7)}  ${job.kind.padEnd(16)} ${job.id}${job.attemptsMade ? `  (${job.attemptsMade} attempts)` : ''}` +
          `${job.failedReason ? `  ${job.failedReason}` : ''}\n`,
      );
  }

  /**
   * The embedded API holds its jobs on timers in its own memory: it is asked at `/admin/jobs`, with
   * the operator's credentials, where it recorded that it answers (else at this process's HOST and PORT).
   */
  private fromEmbeddedApi(limit: number): Promise<JobList> {
    const recorded = runningApiAddress(this.config.dataDir);
    const url = new URL(recorded?.localUrl ?? localApiUrl(this.config, this.config.port));
    const plain = url.protocol === 'http:';
    const where = recorded ? url.host : `${url.host} (no API recorded its address in ${this.config.dataDir}; HOST and PORT)`;
    const options = {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port),
      path: `/admin/jobs?limit=${limit}`,
      // The API's own certificate, often self-signed: this is a call to this machine's process.
      rejectUnauthorized: false,
      auth: `${OPERATOR_USERNAME}:${operatorPassword(this.config)}`,
      // Behind the TLS proxy the API answers only what the proxy says came over HTTPS.
      headers: plain ? { 'x-forwarded-proto': 'https' } : {},
    };
    return new Promise((resolve, reject) => {
      const asked = (plain ? httpRequest : httpsRequest)(options, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(JSON.parse(text) as JobList)
            : reject(new Error(`the API at ${url.host} answered ${response.statusCode}: ${text}`)),
        );
      });
      asked.on('error', (error) =>
        reject(new Error(`no API answers at ${where}: the embedded jobs live in the running API (${error.message})`)),
      );
      asked.end();
    });
  }

  @Option({ flags: '--limit <count>', description: 'show at most this many jobs (100)' })
  parseLimit(value: string): number {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw new Error('--limit must be a whole number from 1');
    return n;
  }

  @Option({ flags: '--json', description: 'print JSON' })
  parseJson() {
    return true;
  }
}

@Command({
  name: 'operator:password',
  description: `print the password of the operator's credentials (user ${OPERATOR_USERNAME}) for /metrics and /admin/queues`,
})
export class OperatorPasswordCommand extends CommandRunner {
  constructor(private readonly config: ServiceConfig) {
    super();
  }

  async run(): Promise<void> {
    process.stdout.write(`${operatorPassword(this.config)}\n`);
  }
}
