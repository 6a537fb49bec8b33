import { DEAL_DETAILS } from '@deals/catalog';
import { ALL_PROJECTIONS } from '@deals/runtime';
import { isDeadLetterCollection, ViewStore } from '@deals/kernel';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, honolulu, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';
import { tempDir } from '../../support/temp-dir';

/** Probes until `ok` holds, or gives the last probe back after a ceiling that means hung. */
async function eventually<T>(probe: () => Promise<T>, ok: (value: T) => boolean, ms = 30_000): Promise<{ value: T }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() - started > ms) return { value };
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('data survives restarts, and the operator CLI works beside the running server', () => {
  const dir = tempDir('ops');
  afterAll(() => dir.remove());

  it('keeps partners, regions and deals across a restart', async () => {
    const first = await TestApi.start({ dataDir: dir.path });
    const partner = await first.createPartner('Durable');
    await first.importRegions([chicago]);
    await first.importDeals([spaDay]);
    const before = await first.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey });
    expect(before.status).toBe(200);
    await first.stop();

    const second = await TestApi.start({ dataDir: dir.path, clock: first.clock });
    try {
      const after = await second.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey });
      expect(after.body).toEqual(before.body);
      expect((await second.call('GET', '/api/v1/regions', { apiKey: partner.apiKey })).body.regions).toEqual([
        { id: 'chicago', active: true, name: 'Chicago' },
      ]);
    } finally {
      await second.stop();
    }
  });

  describe('with the server running', () => {
    // Each CLI call is a process of its own that compiles the CLI from source (~3 s here, two to
    // three times that while other suites load the machine): six of them outgrow jest's 30 s. The
    // one timing the service promises (what the CLI writes is seen within a second) is asserted
    // where suites run alone (cli-writes-seen.alone.e2e-spec.ts).
    jest.setTimeout(240_000);
    let api: TestApi;
    let apiKey: string;
    beforeAll(async () => {
      api = await TestApi.start({ dataDir: dir.path });
      apiKey = (await api.createPartner('Operator test')).apiKey;
    });
    afterAll(() => api.stop());

    it('shows what the CLI writes: a partner, regions, deals and a state move', async () => {
      const created = await runCli(dir.path, ['partners:create', '--name', 'From the CLI', '--json']);
      expect(created.code).toBe(0);
      const cliPartner = JSON.parse(created.stdout.trim());
      expect(cliPartner).toEqual({
        partner_id: expect.any(String),
        name: 'From the CLI',
        role: 'partner',
        api_key: expect.stringMatching(/^dk_/),
        username: expect.stringMatching(/^from-the-cli-/),
        password: expect.any(String),
        requests_per_minute: null,
        test: {
          partner_id: `${cliPartner.partner_id}_test`,
          api_key: expect.stringMatching(/^dk_test_/),
          username: expect.stringMatching(/^from-the-cli-test-/),
          password: expect.any(String),
        },
      });
      // Its budget, set and put back by partners:update; a budget that is not a whole number, or an unknown partner, is refused.
      const updated = await runCli(dir.path, ['partners:update', cliPartner.partner_id, '--rate-limit', '120']);
      expect([updated.code, updated.stdout]).toEqual([0, `Partner ${cliPartner.partner_id}: a budget of 120 requests a minute.\n`]);
      expect((await runCli(dir.path, ['partners:update', cliPartner.partner_id, '--rate-limit', 'default'])).code).toBe(0);
      const bad = await runCli(dir.path, ['partners:update', cliPartner.partner_id, '--rate-limit', '1.5']);
      expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('--rate-limit must be a whole number')]);
      const unknown = await runCli(dir.path, ['partners:update', 'no-such-partner', '--rate-limit', '10']);
      expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('partner not found')]);
      const budgeted = JSON.parse(
        (await runCli(dir.path, ['partners:create', '--name', 'Budgeted', '--rate-limit', '300', '--json'])).stdout,
      );
      expect(budgeted.requests_per_minute).toBe(300);
      // A name with control characters (an escape sequence would drive the operator's terminal) is refused.
      const escaped = await runCli(dir.path, ['partners:create', '--name', 'Evil\u001b[2J', '--json']);
      expect([escaped.code, escaped.stderr]).toEqual([
        1,
        expect.stringContaining('must be at most 200 characters, without control or format characters'),
      ]);
      const seen = await eventually(
        () => api.call('GET', '/api/v1/regions', { apiKey: cliPartner.api_key }),
        (r) => r.status === 200,
      );
      expect(seen.value.status).toBe(200);

      const regionsFile = join(dir.path, 'regions.json');
      writeFileSync(regionsFile, JSON.stringify([honolulu, { ...honolulu, id: 'Bad Id', time_zone: 'Nowhere/Else' }]));
      const regions = await runCli(dir.path, ['regions:import', regionsFile]);
      expect(regions.code).toBe(1);
      expect(regions.stdout).toContain('1 of 2 regions imported.');
      expect(regions.stdout).toMatch(/Bad Id: .*time_zone/);

      const dealsFile = join(dir.path, 'deals.json');
      writeFileSync(dealsFile, JSON.stringify([{ ...ongoingShipped, quantity: 7 }]));
      expect((await runCli(dir.path, ['deals:import', dealsFile])).stdout).toContain('1 of 1 deals imported.');
      // The import appends the listing and the stock one after the other: the server may show the
      // first a poll before the second.
      const deal = await eventually(
        () => api.call('GET', '/deals/chicago-headphones', { apiKey }),
        (r) => r.status === 200 && r.body.deal?.num_left === 7,
      );
      expect(deal.value.body.deal).toMatchObject({ num_left: 7, state: 'in-flight' });

      expect((await runCli(dir.path, ['deals:transition', 'chicago-headphones', 'paused'])).code).toBe(0);
      const paused = await eventually(
        () => api.call('GET', '/deals/chicago-headphones', { apiKey }),
        (r) => r.body.deal.state === 'paused',
      );
      expect(paused.value.body.deal.state).toBe('paused');
      const refused = await runCli(dir.path, ['deals:transition', 'chicago-headphones', 'approved']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('cannot move from paused to approved');
    });

    it('rebuilds views equal to the live ones and the server switches to them', async () => {
      const views = api.get(ViewStore);
      const names = ALL_PROJECTIONS.map((p) => p.name);
      const snapshot = async () => Promise.all(names.map((name) => views.find(name, {}, { sort: { _id: 1 } })));
      // The live views hold everything the CLI (another process) wrote before they are compared.
      await api.settle();
      const live = await snapshot();
      const generations = (await views.status()).map((s) => s.generation);
      const before = (await api.call('GET', '/deals/chicago-spa-day', { apiKey })).body;

      const rebuilt = await runCli(dir.path, ['projections:rebuild']);
      expect(rebuilt.code).toBe(0);
      expect(rebuilt.stdout).toContain(`rebuilt ${names.join(', ')} from `);
      // Its stderr is a pipe, not a terminal: the progress bar still prints, a line at a time.
      expect(rebuilt.stderr).toMatch(/^ +\S+ 100% (\d+)\/\1 events {2}\d+ events\/s/m);

      const switched = await eventually(
        () => views.status(),
        (s) => s.every((c, i) => c.generation !== generations[i]),
      );
      expect(switched.value.map((s) => s.generation)).not.toEqual(generations);
      expect(await snapshot()).toEqual(live);
      expect((await api.call('GET', '/deals/chicago-spa-day', { apiKey })).body).toEqual(before);

      // Answered from the files (no service modules loaded): as the serving API sees its views.
      const status = await runCli(dir.path, ['projections:status', '--json']);
      const rows = JSON.parse(status.stdout);
      for (const row of rows) expect(row).toMatchObject({ lag: 0, checkpoint: row.head });
      // Every view; the views' dead letters are no view (projections:dead-letters lists them).
      const served = (await views.status())
        .filter(({ collection }) => !isDeadLetterCollection(collection))
        .map(({ collection, generation, documents }) => ({ collection, generation, documents }));
      expect(rows.map(({ collection, generation, documents }: (typeof served)[number]) => ({ collection, generation, documents }))).toEqual(
        served,
      );
      const text = (await runCli(dir.path, ['projections:status'])).stdout;
      expect(text.split('\n')[0]).toBe(`log head: ${rows[0].head}`);
      for (const name of names) expect(text).toMatch(new RegExp(`^${name} +g\\w+ +checkpoint ${rows[0].head} +\\d+ docs +caught up$`, 'm'));
    });
  });

  it('serves a data folder from one embedded API at a time: a second start is refused while the first runs, a lock left by a dead process is taken over', async () => {
    const folder = tempDir('one-api');
    try {
      const first = await TestApi.start({ dataDir: folder.path });
      await expect(TestApi.start({ dataDir: folder.path })).rejects.toThrow(/another API process \(pid \d+\) serves/);
      await first.stop();
      // A kill -9 leaves the file behind, naming a process that is gone.
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
      writeFileSync(join(folder.path, 'api.pid'), `${gone}\n`);
      const second = await TestApi.start({ dataDir: folder.path });
      expect(readFileSync(join(folder.path, 'api.pid'), 'utf8').trim()).toBe(String(process.pid));
      await second.stop();
      // A pid another program runs now (reused after a restart) names no API either.
      const other = spawn('sleep', ['60'], { stdio: 'ignore' });
      try {
        writeFileSync(join(folder.path, 'api.pid'), `${other.pid}\n`);
        const third = await TestApi.start({ dataDir: folder.path });
        expect(readFileSync(join(folder.path, 'api.pid'), 'utf8').trim()).toBe(String(process.pid));
        await third.stop();
      } finally {
        other.kill();
      }
    } finally {
      folder.remove();
    }
  });

  it('makes a new data folder, its views and TLS folders readable by the service alone (they hold emails and card metadata)', async () => {
    const folder = tempDir('private');
    try {
      const fresh = join(folder.path, 'data');
      const api = await TestApi.start({ dataDir: fresh });
      await api.stop();
      for (const dir of [fresh, join(fresh, 'views'), join(fresh, 'tls')]) expect([dir, statSync(dir).mode & 0o777]).toEqual([dir, 0o700]);
    } finally {
      folder.remove();
    }
  });

  it('loads the demo catalogue and demo partner on a first start, and not again', async () => {
    const demoDir = tempDir('demo');
    try {
      const api = await TestApi.start({ dataDir: demoDir.path, env: { DEMO_DATA: 'on' } });
      const demo = JSON.parse(readFileSync(join(demoDir.path, 'demo-partner.json'), 'utf8'));
      await api.settle();
      const regions = await api.call('GET', '/api/v1/regions', { apiKey: demo.api_key });
      expect(regions.body.regions.length).toBeGreaterThanOrEqual(30);
      expect(await api.get(ViewStore).count(DEAL_DETAILS, {})).toBeGreaterThanOrEqual(200);
      const types = new Set(
        (await api.get(ViewStore).find<any>(DEAL_DETAILS, {})).map((d) => `${d.deal.type}/${d.deal.fulfillment_method}`),
      );
      expect(types.size).toBe(12);
      await api.stop();
      const again = await TestApi.start({ dataDir: demoDir.path, env: { DEMO_DATA: 'on' } });
      expect(JSON.parse(readFileSync(join(demoDir.path, 'demo-partner.json'), 'utf8'))).toEqual(demo);
      expect((await again.call('GET', '/api/v1/regions', { apiKey: demo.api_key })).status).toBe(200);
      await again.stop();
    } finally {
      demoDir.remove();
    }
  });
});
