/**
 * A bulk job of users against the same users made one call at a time.
 *
 * Setup: the whole API (`startBenchApi`: Nest, auth, the embedded event store and views) on a fresh
 * data directory, one partner. Single calls: `POST /users` `{email, first_name, last_name}` one after
 * the other from one client over one keep-alive HTTPS connection (a partner's loop over its users),
 * each answer 200 with a `user_id`. Bulk: the same number of other users in one `POST /v1/bulk_jobs`
 * (`kind: users`), timed from the request until `GET /v1/bulk_jobs/:id` says completed (polled every
 * 20 ms on the same kind of connection) with every item succeeded. The two run alternately, single
 * calls first, `rounds` times on one API; each figure is users a second over all its rounds.
 * Aim: the job at least 5x the single calls' rate.
 */
import { CreatePartner } from '@deals/accounts';
import { OPERATOR } from '@deals/kernel';
import { ProjectionHost } from '@deals/runtime';
import { CommandBus } from '@nestjs/cqrs';
import { Agent } from 'node:https';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { httpsGet, httpsPostJson } from './support/https-get';
import { startBenchApi } from './support/bench-api';
import { withTempDir } from './support/temp-dir';

const USERS = 10_000;
const QUICK_USERS = 2_000;
const AIM = 5;
const POLL_MS = 20;

export async function bulkJobsBench(options: BenchOptions): Promise<BenchRow[]> {
  const users = options.quick ? QUICK_USERS : USERS;
  const rounds = options.quick ? 1 : 2;
  return withTempDir('bulk-jobs', async (dataDir) => {
    const { api, tls, origin } = await startBenchApi(dataDir);
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: tls.cert });
    try {
      const partner = await api.app.get(CommandBus).execute(new CreatePartner('Bulk bench partner', 'partner', OPERATOR));
      await api.app.get(ProjectionHost).waitForAll();
      const key = `api_key=${encodeURIComponent(partner.apiKey)}`;
      const user = (tag: string, n: number) => ({ email: `${tag}-${n}@bench.test`, first_name: 'Bench', last_name: 'User' });
      let singleMs = 0;
      let bulkMs = 0;
      for (let round = 0; round < rounds; round++) {
        const started = performance.now();
        for (let n = 0; n < users; n++) {
          const answer = await httpsPostJson(`${origin}/users?${key}`, tls.cert, user(`single${round}`, n), {}, agent);
          if (answer.status !== 200)
            throw new Error(`POST /users answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}`);
        }
        singleMs += performance.now() - started;

        const sent = performance.now();
        const items = Array.from({ length: users }, (_, n) => ({ reference: `r${round}-${n}`, ...user(`bulk${round}`, n) }));
        const accepted = await httpsPostJson(`${origin}/v1/bulk_jobs?${key}`, tls.cert, { kind: 'users', items }, {}, agent);
        if (accepted.status !== 202)
          throw new Error(`POST /v1/bulk_jobs answered ${accepted.status}: ${accepted.body.toString('utf8').slice(0, 300)}`);
        const id = (JSON.parse(accepted.body.toString('utf8')) as { bulk_job: { id: string } }).bulk_job.id;
        for (;;) {
          const job = JSON.parse((await httpsGet(`${origin}/v1/bulk_jobs/${id}?${key}`, tls.cert)).body.toString('utf8')).bulk_job;
          if (job.status === 'completed') {
            if (job.succeeded_count !== users) throw new Error(`bulk job ${id}: ${JSON.stringify(job)}`);
            break;
          }
          await sleep(POLL_MS);
        }
        bulkMs += performance.now() - sent;
      }
      const singleRate = (users * rounds * 1000) / singleMs;
      const bulkRate = (users * rounds * 1000) / bulkMs;
      return [
        row(
          `bulk job of ${users.toLocaleString('en-US')} users, users/s`,
          bulkRate,
          'users/s',
          'POST /users one at a time, one keep-alive client',
          singleRate,
          {
            aim: { min: AIM },
            notes: [
              `${rounds} round(s) each, alternating; single calls ${(singleMs / 1000 / rounds).toFixed(1)} s a round, the job ${(bulkMs / 1000 / rounds).toFixed(1)} s`,
            ],
          },
        ),
      ];
    } finally {
      agent.destroy();
      await api.close();
    }
  });
}
