import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, ongoingShipped } from '../../support/catalogue-fixtures';
import { polled } from '../../support/polled';
import { tempDir } from '../../support/temp-dir';

/** What docs/operations.md promises, with room: the API sees the CLI's writes within about 100 ms. */
const SEEN_WITHIN_MS = 1000;

/**
 * The operator CLI, a process of its own, writes beside the running API; the API sees what it
 * wrote within a second. Timed after the other suites, alone (jest.alone.config.js): on CPUs
 * shared with another suite's processes, it would time that suite's load as much as the service's.
 */
describe('the CLI beside a running API', () => {
  jest.setTimeout(240_000);
  const dir = tempDir('cli-seen');
  let api: TestApi;
  beforeAll(async () => {
    api = await TestApi.start({ dataDir: dir.path });
    // The harness checks every answer against the API's description, made on its first call: not timed.
    const { apiKey } = await api.createPartner('Warming up');
    expect((await api.call('GET', '/api/v1/regions', { apiKey })).status).toBe(200);
  });
  afterAll(async () => {
    await api.stop();
    dir.remove();
  });

  /** How long after `started` the API first answers `path` so that `ok` holds (polled 10 ms apart). */
  const seenAfter = async (started: number, path: string, apiKey: string, ok: (body: any) => boolean) => {
    const reply = await polled(
      () => api.call('GET', path, { apiKey }),
      (r) => r.status === 200 && ok(r.body),
      30_000,
      10,
    );
    expect([reply.status, ok(reply.body)]).toEqual([200, true]);
    return Date.now() - started;
  };

  it(`serves what the CLI wrote within ${SEEN_WITHIN_MS} ms of its exit: a new partner, and a deal's state move`, async () => {
    const created = await runCli(dir.path, ['partners:create', '--name', 'Seen at once', '--json']);
    const exited = Date.now();
    expect(created.code).toBe(0);
    const { api_key: apiKey } = JSON.parse(created.stdout);
    const partnerMs = await seenAfter(exited, '/api/v1/regions', apiKey, () => true);

    const file = (name: string, records: unknown[]) => {
      writeFileSync(join(dir.path, name), JSON.stringify(records));
      return join(dir.path, name);
    };
    expect((await runCli(dir.path, ['regions:import', file('regions.json', [chicago])])).code).toBe(0);
    expect((await runCli(dir.path, ['deals:import', file('deals.json', [ongoingShipped])])).code).toBe(0);
    await api.settle();
    const deal = `/deals/${ongoingShipped.id}`;
    expect((await api.call('GET', deal, { apiKey })).body.deal.state).toBe('in-flight');
    const paused = await runCli(dir.path, ['deals:transition', ongoingShipped.id, 'paused']);
    const moved = Date.now();
    expect(paused.code).toBe(0);
    const stateMs = await seenAfter(moved, deal, apiKey, (body) => body.deal?.state === 'paused');

    process.stdout.write(`seen after the CLI exited: the partner in ${partnerMs} ms, the state move in ${stateMs} ms\n`);
    expect(partnerMs).toBeLessThan(SEEN_WITHIN_MS);
    expect(stateMs).toBeLessThan(SEEN_WITHIN_MS);
  });
});
