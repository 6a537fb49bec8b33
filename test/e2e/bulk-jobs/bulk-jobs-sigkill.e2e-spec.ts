import Database from 'better-sqlite3';
import { SystemClock } from '@deals/kernel';
import { join } from 'node:path';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { tempDir } from '../../support/temp-dir';

const ITEMS = 5000;
/** Items with a result before the kill: a few chunks recorded, most still to run. */
const KILLED_AT = 400;

/**
 * Kills the API process (SIGKILL) in the middle of a bulk job of users, starts it again on the same
 * data, and checks that the job completes with every item's result once, and that the log holds
 * one registration per item: no item lost, none done twice.
 */
describe('a SIGKILL in the middle of a bulk job', () => {
  const dir = tempDir('bulk-sigkill');
  afterAll(() => dir.remove());

  it('completes the job after the restart: each item done once, each result once', async () => {
    const setup = await TestApi.start({ dataDir: dir.path, clock: new SystemClock() });
    const partner = await setup.createPartner('Bulk');
    await setup.stop();
    const key = `?api_key=${partner.apiKey}`;

    const port = await freePort();
    let api = await ApiProcess.start(dir.path, port);
    const items = Array.from({ length: ITEMS }, (_, i) => ({ reference: `crm-${i}`, email: `bulk${i}@example.com`, first_name: `N${i}` }));
    const accepted = await api.call('POST', `/v1/bulk_jobs${key}`, { kind: 'users', items });
    expect(accepted.status).toBe(202);
    const id = accepted.body.bulk_job.id as string;
    const job = async () => (await api.call('GET', `/v1/bulk_jobs/${id}${key}`)).body.bulk_job;
    // Killed by the count of results, not by the time a machine takes to get there.
    let before = await job();
    while (before.processed_count < KILLED_AT) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      before = await job();
    }
    await api.kill();
    expect(before.status).toBe('running');
    expect(before.processed_count).toBeLessThan(ITEMS);

    api = await ApiProcess.start(dir.path, port);
    try {
      let after = await job();
      while (after.status !== 'completed') {
        await new Promise((resolve) => setTimeout(resolve, 50));
        after = await job();
      }
      expect(after).toMatchObject({ item_count: ITEMS, processed_count: ITEMS, succeeded_count: ITEMS, matched_count: 0, failed_count: 0 });
      const results: Array<{ index: number; reference: string; status: string; resource_id: string }> = [];
      for (let page = 1; results.length < ITEMS; page++) {
        const reply = await api.call('GET', `/v1/bulk_jobs/${id}/results${key}&per_page=1000&page=${page}`);
        expect(reply.body.results.length).toBeGreaterThan(0);
        results.push(...reply.body.results);
      }
      expect(results.map((r) => r.index)).toEqual(items.map((_, i) => i));
      expect(results.every((r, i) => r.reference === `crm-${i}` && r.status === 'succeeded')).toBe(true);

      // The log: one registration per item, each of the user its result names.
      const db = new Database(join(dir.path, 'events.sqlite'), { readonly: true });
      const registered = db.prepare("SELECT json_extract(data, '$.userId') AS id FROM events WHERE type = 'UserRegistered'").pluck().all();
      const chunks = db.prepare("SELECT count(*) FROM events WHERE type = 'BulkJobChunkProcessed'").pluck().get();
      db.close();
      expect(registered).toHaveLength(ITEMS);
      expect(new Set(registered)).toEqual(new Set(results.map((r) => r.resource_id)));
      expect(chunks).toBe(ITEMS / 200);
    } finally {
      await api.stop();
    }
  });
});
