import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { freePort } from '../support/api-process';
import { buyerWithCard } from '../support/test-cards';
import { dockerEngine } from './engine-state';
import { fencedBlocks } from '../support/doc-blocks';
import { InsecureHttps } from '../support/insecure-https';

const engine = dockerEngine();
const REPOSITORY = join(__dirname, '..', '..');
const PROJECT = 'dealsdeploy';
const COMPOSE_FILES = ['-f', 'docker-compose.postgres.yml', '-f', 'deploy/offline/docker-compose.offline.yml'];
/** The docs' section whose every shell block the setup runs as written. */
const SECTION = '## On PostgreSQL, with Docker';
/** A vanished replica costs a client at most this (the proxy's connect timeout, then another replica). */
const VANISHED_REPLICA_COST_MS = 1_000;
/** The service serves again within this of a server's return (as the README states). */
const BACK_WITHIN_MS = 5_000;
const insecure = new InsecureHttps();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

if (engine.why !== undefined) {
  describe.skip(`docker-compose.postgres.yml deployed on Docker — skipped: ${engine.why}`, () => {
    it('needs a Docker engine', () => undefined);
  });
} else {
  /**
   * The compose deployment for real: images made without a registry, the service's image built from
   * the Dockerfile, docker-compose.postgres.yml brought up (PostgreSQL, Redis, the worker, two API
   * replicas behind HAProxy), the walkthrough run against it, a replica and the database restarted
   * through Docker, then everything torn down with its volumes.
   */
  describe('docker-compose.postgres.yml deployed on Docker', () => {
    // Images made from nothing and the service's image built: some 5 minutes on 2 cores.
    jest.setTimeout(25 * 60_000);
    const env = { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER: 'docker' };
    let port: number;
    let apiKey: string;

    const run = (command: string, args: string[], timeoutMs = 10 * 60_000): Promise<Ran> =>
      new Promise((resolve) => {
        execFile(
          command,
          args,
          {
            cwd: REPOSITORY,
            env: { ...env, DEALS_PORT: String(port), COMPOSE_PROJECT_NAME: PROJECT },
            timeout: timeoutMs,
            maxBuffer: 64 << 20,
          },
          (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const compose = (...args: string[]) => run('docker-compose', ['-p', PROJECT, ...COMPOSE_FILES, ...args]);
    const expectRan = (ran: Ran, what: string) => {
      if (ran.code !== 0) throw new Error(`${what} failed (${ran.code}):\n${ran.stdout.slice(-2000)}\n${ran.stderr.slice(-4000)}`);
      return ran.stdout;
    };
    const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
      const began = Date.now();
      const done = await work();
      process.stdout.write(`${what}: ${((Date.now() - began) / 1000).toFixed(1)} s\n`);
      return done;
    };
    /** A call through the proxy's published port. */
    const call = async (
      method: string,
      path: string,
      body?: unknown,
      { fresh = false }: { fresh?: boolean } = {},
    ): Promise<{ status: number; body: any; retryAfter?: string }> => {
      // fresh: a connection of its own, closed after the answer, so that the proxy picks a replica for it.
      const reply = await request(`https://127.0.0.1:${port}${path}`, {
        method: method as never,
        dispatcher: insecure,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(fresh ? { connection: 'close' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await reply.body.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      return { status: reply.statusCode, body: parsed, retryAfter: reply.headers['retry-after'] as string | undefined };
    };
    /** Polls `probe` until it holds; the time it took, or a failure naming `what` after `withinMs`. */
    const until = async (what: string, probe: () => Promise<boolean>, withinMs: number): Promise<number> => {
      const began = Date.now();
      for (;;) {
        if (await probe().catch(() => false)) return Date.now() - began;
        if (Date.now() - began > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const ready = async () => (await call('GET', '/health/ready')).status === 200;
    /** One unit of the first deal on sale that `userId` can buy with `cardId` through the proxy. */
    const buy = async (userId: string, cardId: string, via: typeof call = call): Promise<{ status: number; body: any }> => {
      const deals: Array<{ id: string; current_price: number }> = (await via('GET', `/v1/deals?api_key=${apiKey}`)).body.deals;
      let bought: { status: number; body: any } = { status: 0, body: null };
      for (const deal of deals.filter((d) => d.current_price > 0).slice(0, 10)) {
        bought = await via('POST', `/purchases?api_key=${apiKey}`, {
          deal_id: deal.id,
          quantity: 1,
          user_id: userId,
          credit_card_id: cardId,
          expected_price_per_unit: deal.current_price,
        });
        if (bought.status === 200) break;
      }
      return bought;
    };

    beforeAll(async () => {
      port = await freePort();
      await compose('down', '-v', '--remove-orphans'); // a run cut short before
      // docs/distributed-mode.md's Docker section as written, in one bash: the offline images, up,
      // ready through the proxy, the demo partner's file, a partner made by the CLI.
      const blocks = fencedBlocks(join(REPOSITORY, 'docs', 'distributed-mode.md'), SECTION, 'sh');
      expect(blocks.length).toBeGreaterThanOrEqual(3);
      const script = ['set -euo pipefail', ...blocks].join('\n');
      await timed(`docs/distributed-mode.md "${SECTION}", ${blocks.length} blocks`, async () =>
        expectRan(await run('bash', ['-c', script], 20 * 60_000), `the blocks of "${SECTION}"`),
      );
      const waited = await until('/health/ready through the proxy', ready, 120_000);
      process.stdout.write(`ready through the proxy ${(waited / 1000).toFixed(1)} s after the blocks\n`);
    });

    afterAll(async () => {
      if (port === undefined) return;
      const logs = await compose('logs', '--no-color', '--tail=200');
      if (logs.code === 0) writeFileSync(join(REPOSITORY, 'test-output', 'deployment-compose.log'), logs.stdout);
      await timed('docker-compose down -v', async () => expectRan(await compose('down', '-v', '--remove-orphans'), 'docker-compose down'));
    });

    it('runs every service: PostgreSQL and Redis healthy, the worker, two API replicas and the proxy up', async () => {
      const listed = expectRan(await compose('ps'), 'docker-compose ps');
      for (const service of ['postgres_1', 'redis_1', 'worker_1', 'api_1', 'api_2', 'proxy_1'])
        expect(listed).toMatch(new RegExp(`${PROJECT}_${service}\\s.*Up`));
      for (const server of ['postgres_1', 'redis_1']) expect(listed).toMatch(new RegExp(`${PROJECT}_${server}\\s.*\\(healthy\\)`));
      const health = await call('GET', '/health');
      expect(health.status).toBe(200);
      expect(JSON.stringify(health.body)).toContain('postgresql');
    });

    it("serves the walkthrough: the demo partner's file, a partner made by the CLI, deals listed, a card stored and a purchase made and read back", async () => {
      // Written once the demo data is in (on the first start), which may be after the replicas are ready.
      const demoFile = () => compose('exec', '-T', '--index=1', 'api', 'cat', '/data/demo-partner.json');
      await until('/data/demo-partner.json written', async () => (await demoFile()).code === 0, 60_000);
      const demo = JSON.parse(expectRan(await demoFile(), 'reading demo-partner.json'));
      expect((await call('GET', `/v1/deals?api_key=${demo.api_key}`)).status).toBe(200);
      const made = expectRan(
        await compose('run', '--rm', '-T', 'worker', 'node', 'dist/apps/cli/src/main.js', 'partners:create', '--name', 'Acme', '--json'),
        'partners:create',
      );
      apiKey = JSON.parse(made.slice(made.indexOf('{'))).api_key;
      // The worker projects the new partner; either replica then knows its key.
      await until(
        'the new partner known to both replicas',
        async () =>
          (await call('GET', `/v1/deals?api_key=${apiKey}`)).status === 200 &&
          (await call('GET', `/v1/deals?api_key=${apiKey}`)).status === 200,
        10_000,
      );
      expect((await call('GET', `/v1/deals?api_key=${apiKey}`)).body.deals.length).toBeGreaterThan(0);
      const { userId, cardId } = await buyerWithCard({ call }, apiKey, 'deployed@example.com');
      const bought = await buy(userId, cardId);
      expect(bought.status).toBe(200);
      const purchase = bought.body.purchase;
      for (let i = 0; i < 2; i++)
        expect((await call('GET', `/purchases/${purchase.id}?api_key=${apiKey}`)).body.purchase.id).toBe(purchase.id);
    });

    it('serves through the other replica while one is restarted, and through both after', async () => {
      const statuses: number[] = [];
      let restarting = true;
      const load = (async () => {
        // Ten calls a second: within the partner's request budget.
        while (restarting) {
          statuses.push((await call('GET', `/v1/deals?api_key=${apiKey}`).catch(() => ({ status: 0 }))).status);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const began = Date.now();
      let back: number | undefined;
      try {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expectRan(await run('docker', ['restart', `${PROJECT}_api_1`], 60_000), 'docker restart api_1');
        // The restarted replica itself ready (asked inside its container, not through the proxy).
        const probe = `fetch('https://127.0.0.1:3000/health/ready').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))`;
        const exec = ['exec', '-e', 'NODE_TLS_REJECT_UNAUTHORIZED=0', `${PROJECT}_api_1`, 'node', '-e', probe];
        await until('the restarted replica ready', async () => (await run('docker', exec, 10_000)).code === 0, 60_000);
        back = Date.now() - began - 1_000;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        // The load stops whatever happened: a failure above must not leave it calling.
        restarting = false;
        await load;
      }
      const served = statuses.filter((s) => s === 200).length;
      process.stdout.write(
        `an API replica restarted (ready again ${((back ?? NaN) / 1000).toFixed(1)} s after the restart began): ${served} of ${statuses.length} calls 200 meanwhile\n`,
      );
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    });

    it(`costs a call at most ${VANISHED_REPLICA_COST_MS} ms when a replica is stopped under purchases and vanishes, and none fails`, async () => {
      const answers: number[] = [];
      const callMs: number[] = [];
      // Each call on a new connection (as clients that do not keep theirs alive): the proxy sends
      // some to the vanished replica until its checks take it out.
      const timedCall: typeof call = async (method, path, body) => {
        const began = Date.now();
        const answer = await call(method, path, body, { fresh: true });
        callMs.push(Date.now() - began);
        return answer;
      };
      let buying = true;
      const load = (async () => {
        // A buyer of its own for each purchase: a user's limit on a deal never refuses one.
        for (let n = 0; buying; n++) {
          const { userId, cardId } = await buyerWithCard({ call: timedCall }, apiKey, `replica-stopped-${n}@example.com`);
          answers.push((await buy(userId, cardId, timedCall)).status);
        }
      })();
      try {
        // Purchases through both replicas first, then one replica stopped (SIGTERM: it answers what
        // it has, stops listening and exits; its container and its address then go, and nothing
        // refuses a connection to it) while the purchases go on.
        await until('purchases under way', async () => answers.length >= 5, 60_000);
        expectRan(await run('docker', ['stop', `${PROJECT}_api_1`], 60_000), 'docker stop api_1');
        const stoppedAt = answers.length;
        await until('purchases after the stop', async () => answers.length >= stoppedAt + 20, 120_000);
      } finally {
        buying = false;
        await load;
      }
      expectRan(await run('docker', ['start', `${PROJECT}_api_1`], 60_000), 'docker start api_1');
      const sorted = [...callMs].sort((a, b) => a - b);
      const [median, slowest] = [sorted[Math.floor(sorted.length / 2)], sorted[sorted.length - 1]];
      process.stdout.write(
        `a replica stopped under purchases: ${answers.length} purchases (${callMs.length} calls), statuses ${[...new Set(answers)].join(', ')}; a call's median ${median} ms, slowest ${slowest} ms\n`,
      );
      expect(answers.filter((status) => status !== 200)).toEqual([]);
      // What the vanished replica cost the slowest call, over what a call takes anyway.
      expect(slowest - median).toBeLessThanOrEqual(VANISHED_REPLICA_COST_MS);
      await until('both replicas serving again', ready, 60_000);
    });

    it(`answers 503 with Retry-After while the database restarts, never a 500, and serves again within ${BACK_WITHIN_MS} ms of its return`, async () => {
      const answers: Array<{ status: number; retryAfter?: string }> = [];
      expectRan(await run('docker', ['stop', `${PROJECT}_postgres_1`]), 'docker stop postgres');
      for (let i = 0; i < 6; i++) answers.push(await call('GET', `/v1/deals?api_key=${apiKey}`));
      const health = await call('GET', '/health/ready');
      expect(health.status).toBe(503);
      expect(JSON.stringify(health.body)).toMatch(/postgresql/);
      expectRan(await run('docker', ['start', `${PROJECT}_postgres_1`]), 'docker start postgres');
      const started = Date.now();
      await until(
        'PostgreSQL healthy',
        async () => (await run('docker', ['exec', `${PROJECT}_postgres_1`, 'pg_isready', '-U', 'deals', '-d', 'deals'])).code === 0,
        60_000,
      );
      const accepting = Date.now() - started;
      const serving = await until(
        'serving again',
        async () => (await call('GET', `/v1/deals?api_key=${apiKey}`)).status === 200 && ready(),
        BACK_WITHIN_MS,
      );
      process.stdout.write(
        `the database stopped and started: ${answers.map((a) => a.status).join(', ')} meanwhile; accepting ${(accepting / 1000).toFixed(1)} s after its start, serving again ${serving} ms after\n`,
      );
      expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
      for (const answer of answers.filter((a) => a.status === 503)) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      const { userId, cardId } = await buyerWithCard({ call }, apiKey, 'after-restart@example.com');
      const bought = await buy(userId, cardId);
      expect(bought.status).toBe(200);
      expect((await call('GET', `/purchases/${bought.body.purchase.id}?api_key=${apiKey}`)).status).toBe(200);
    });
  });
}
