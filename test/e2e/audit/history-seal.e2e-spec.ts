import { ManualClock } from '@deals/kernel';
import { HistorySealing } from '@deals/runtime';
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCli, TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { tempDir } from '../../support/temp-dir';
import { fencedBlocks } from '../../support/doc-blocks';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { Client } from 'pg';

const CHECK_SCRIPT = join(__dirname, '..', '..', '..', 'clients', 'audit', 'check-seal.mjs');
const README = join(__dirname, '..', '..', '..', 'README.md');

/** The auditor's check script run on a seal file for `stream`: what it printed and its exit code. */
async function checkSeal(stream: string, sealFile: string, keyFile: string): Promise<{ stdout: string; code: number }> {
  try {
    return { stdout: (await promisify(execFile)(process.execPath, [CHECK_SCRIPT, stream, sealFile, keyFile])).stdout, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; code?: number };
    return { stdout: failed.stdout ?? '', code: failed.code ?? 1 };
  }
}

/**
 * The log's seal end to end: purchases sealed under signed checkpoints; an auditor's own script
 * (node:crypto alone) checks a purchase's history from the API's answer and the public key; and
 * `audit:verify` names each row edited, removed or moved with plain SQL behind the service's back.
 */
describe('a history auditors can verify', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const dir = tempDir('history-seal');
  let api: TestApi;
  let apiKey: string;
  let auditorKey: string;
  const purchases: string[] = [];
  let cardLinkId: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock, dataDir: dir.path });
    apiKey = (await api.createPartner('Seller')).apiKey;
    auditorKey = (await api.createPartner('Audit office', 'auditor')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 20, max_per_user: undefined }, cardLinked]);
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'sealed@example.com' } })).body.user_id;
    const link = await api.call('POST', '/card_links', { apiKey, body: { user_id: userId, deal_id: cardLinked.id } });
    expect(link.status).toBe(200);
    cardLinkId = link.body.card_link.id;
    for (let i = 0; i < 3; i++) {
      const reserved = await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: spaDay.id, num_bought: 1 } });
      purchases.push(reserved.body.purchase.id);
      await api.call('PUT', `/purchases/${reserved.body.purchase.id}/claim`, { apiKey, body: { user_id: userId } });
    }
    await api.settle();
    expect(await api.get(HistorySealing).sealNow()).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await api?.stop();
    dir.remove();
  });

  it("publishes its checkpoint key to anyone, lists signed checkpoints to auditors only, and proves a purchase's history to an auditor's own script", async () => {
    const key = await api.call('GET', '/audit/checkpoint-key');
    expect([key.status, key.body.algorithm]).toEqual([200, 'Ed25519']);
    expect(key.body.public_key).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const listed = await api.call('GET', '/audit/checkpoints', { apiKey: auditorKey });
    expect(listed.status).toBe(200);
    expect(listed.body.checkpoints[0]).toMatchObject({ number: 1, previous: null });
    expect((await api.call('GET', '/audit/checkpoints', { apiKey })).status).toBe(403);

    const audit = await api.call('GET', `/audit/purchases/${purchases[0]}`, { apiKey: auditorKey });
    expect(audit.status).toBe(200);
    expect(audit.body.seal.events.map((e: { type: string; checkpoint: number }) => [e.type, e.checkpoint])).toEqual([
      ['PurchaseReserved', 1],
      ['PurchaseClaimed', 1],
    ]);
    const files = tempDir('history-seal-check');
    try {
      writeFileSync(join(files.path, 'audit.json'), JSON.stringify(audit.body));
      writeFileSync(join(files.path, 'key.pem'), key.body.public_key);
      const checked = await checkSeal(`purchase-${purchases[0]}`, join(files.path, 'audit.json'), join(files.path, 'key.pem'));
      expect(checked.code).toBe(0);
      expect(checked.stdout.trim().split('\n')).toEqual([
        expect.stringMatching(/PurchaseReserved: verified under checkpoint 1$/),
        expect.stringMatching(/PurchaseClaimed: verified under checkpoint 1$/),
      ]);
      // The same answer with one fact changed does not check.
      const forged = structuredClone(audit.body);
      forged.seal.events[0].data.quantity = 5;
      writeFileSync(join(files.path, 'forged.json'), JSON.stringify(forged));
      const refused = await checkSeal(`purchase-${purchases[0]}`, join(files.path, 'forged.json'), join(files.path, 'key.pem'));
      expect([refused.stdout.includes('DOES NOT MATCH'), refused.code]).toEqual([true, 1]);
      // Nor is one purchase's seal taken for another's.
      const other = await checkSeal(`purchase-${purchases[1]}`, join(files.path, 'audit.json'), join(files.path, 'key.pem'));
      expect([other.stdout.includes(`DOES NOT MATCH: the seal is of purchase-${purchases[0]}`), other.code]).toEqual([true, 1]);
    } finally {
      files.remove();
    }
    // A card link's history, sealed alike; a batch's unknown is 404; partners get 403.
    const linkSeal = await api.call('GET', `/audit/card_links/${cardLinkId}/seal`, { apiKey: auditorKey });
    expect([linkSeal.status, linkSeal.body.seal.stream, linkSeal.body.seal.events.length > 0]).toEqual([
      200,
      `cardlink-${cardLinkId}`,
      true,
    ]);
    const linkFiles = tempDir('history-seal-link');
    try {
      writeFileSync(join(linkFiles.path, 'link.json'), JSON.stringify(linkSeal.body));
      writeFileSync(join(linkFiles.path, 'key.pem'), key.body.public_key);
      const checkedLink = await checkSeal(`cardlink-${cardLinkId}`, join(linkFiles.path, 'link.json'), join(linkFiles.path, 'key.pem'));
      expect(checkedLink.code).toBe(0);
      expect(checkedLink.stdout).toMatch(/verified under checkpoint 1/);
      expect(checkedLink.stdout).not.toMatch(/DOES NOT MATCH/);
    } finally {
      linkFiles.remove();
    }
    expect((await api.call('GET', '/audit/batches/no-such-batch/seal', { apiKey: auditorKey })).status).toBe(404);
    expect((await api.call('GET', `/audit/card_links/${cardLinkId}/seal`, { apiKey })).status).toBe(403);
    // The README shows this very script.
    expect(readFileSync(README, 'utf8')).toContain(readFileSync(CHECK_SCRIPT, 'utf8'));
    // Its command that saves the key for the script, run as printed: the PEM, taken out of the JSON answer.
    const field = fencedBlocks(README, '## Five minutes with it', 'sh')[0]
      .split('\n')
      .find((line) => line.startsWith('field()'))!;
    const saveKey = fencedBlocks(README, '## A history auditors can verify', 'sh')[0]
      .split('\n')
      .find((line) => line.includes('/audit/checkpoint-key'))!;
    const saved = tempDir('history-seal-readme');
    try {
      await promisify(execFile)('bash', ['-ec', `${field}\n${saveKey}`], { cwd: saved.path, env: { ...process.env, API: api.url } });
      expect(readFileSync(join(saved.path, 'key.pem'), 'utf8').trim()).toBe(key.body.public_key.trim());
    } finally {
      saved.remove();
    }
  });

  it('names, through audit:verify, a row edited, one removed and two swapped with plain SQL behind its back', async () => {
    const verify = async () => runCli(dir.path, ['audit:verify']);
    const sound = await verify();
    expect([sound.code, sound.stdout]).toEqual([
      0,
      expect.stringMatching(/^verified: \d+ events in \d+ signed checkpoints match their seals/),
    ]);
    const db = new Database(join(dir.path, 'events.sqlite'));
    try {
      const row = (stream: string, revision: number) =>
        db.prepare('SELECT position, data FROM events WHERE stream_id = ? AND revision = ?').get(stream, revision) as {
          position: number;
          data: string;
        };
      // An amount edited.
      const claimed = row(`purchase-${purchases[1]}`, 1);
      const original = claimed.data;
      db.prepare('UPDATE events SET data = ? WHERE position = ?').run(
        original.replace('"amountCents":4900', '"amountCents":100'),
        claimed.position,
      );
      const edited = await verify();
      expect(edited.code).toBe(1);
      expect(edited.stdout).toContain(
        `NOT VERIFIED: the event at position ${String(claimed.position).padStart(20, '0')} (purchase-${purchases[1]} revision 1, checkpoint 1) was changed`,
      );
      db.prepare('UPDATE events SET data = ? WHERE position = ?').run(original, claimed.position);
      expect((await verify()).code).toBe(0);

      // A reservation's claim removed.
      const removed = row(`purchase-${purchases[2]}`, 1);
      const whole = db.prepare('SELECT * FROM events WHERE position = ?').get(removed.position) as Record<string, unknown>;
      db.prepare('DELETE FROM events WHERE position = ?').run(removed.position);
      const gone = await verify();
      expect([gone.code, gone.stdout]).toEqual([
        1,
        expect.stringContaining(`(purchase-${purchases[2]} revision 1, checkpoint 1) was removed`),
      ]);
      // The purchase's own proof says so too (its stream read alone would not show it).
      const proof = (await api.call('GET', `/audit/purchases/${purchases[2]}`, { apiKey: auditorKey })).body.seal;
      expect(proof.removed).toEqual([String(removed.position).padStart(20, '0')]);
      db.prepare(
        'INSERT INTO events (position, id, stream_id, revision, type, data, metadata) VALUES (@position, @id, @stream_id, @revision, @type, @data, @metadata)',
      ).run(whole);

      // Two purchases' reservations swapped (each row's content moved to the other's place).
      const [a, b] = [row(`purchase-${purchases[0]}`, 0), row(`purchase-${purchases[1]}`, 0)];
      const swap = db.prepare('UPDATE events SET stream_id = ?, data = ?, id = ? WHERE position = ?');
      const [rowA, rowB] = [a, b].map(
        (r) => db.prepare('SELECT * FROM events WHERE position = ?').get(r.position) as Record<string, string>,
      );
      db.transaction(() => {
        swap.run(`${rowB.stream_id}~`, rowB.data, rowB.id, a.position);
        swap.run(rowA.stream_id, rowA.data, rowA.id, b.position);
        db.prepare('UPDATE events SET stream_id = ? WHERE position = ?').run(rowB.stream_id, a.position);
      })();
      const moved = await verify();
      expect([moved.code, moved.stdout]).toEqual([1, expect.stringContaining(`position ${String(a.position).padStart(20, '0')}`)]);
      expect(moved.stdout).toMatch(/was moved/);
    } finally {
      db.close();
    }
  }, 120_000);
});

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`a history auditors can verify, on PostgreSQL — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('a history auditors can verify, on PostgreSQL (DATABASE_URL)', () => {
    const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
    const dir = tempDir('history-seal-pg');
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('history_seal')));
    afterAll(async () => {
      await database?.drop();
      dir.remove();
    });

    it('seals its events in the database, and audit:verify names a row edited and one removed by SQL', async () => {
      const env = { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on' };
      const api = await TestApi.start({ clock, dataDir: dir.path, env });
      let purchaseId: string;
      try {
        const { apiKey } = await api.createPartner('Seller');
        await api.importRegions([chicago]);
        await api.importDeals([{ ...spaDay, quantity: 5, max_per_user: undefined }]);
        purchaseId = (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: spaDay.id, num_bought: 2 } })).body.purchase
          .id;
        await api.settle();
        expect(await api.get(HistorySealing).sealNow()).toBeGreaterThan(0);
      } finally {
        await api.stop();
      }
      const verify = () => runCli(dir.path, ['audit:verify', '--json'], env);
      const sound = await verify();
      expect([sound.code, JSON.parse(sound.stdout)]).toEqual([0, expect.objectContaining({ verified: true, unsealed: 0 })]);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        await admin.query(`UPDATE events SET data = jsonb_set(data, '{quantity}', '1') WHERE stream_id = $1 AND revision = 0`, [
          `purchase-${purchaseId}`,
        ]);
        const edited = JSON.parse((await verify()).stdout);
        expect(edited).toMatchObject({
          verified: false,
          failure: { streamId: `purchase-${purchaseId}`, revision: 0, problem: 'was changed: its content does not match its seal' },
        });
        await admin.query(`UPDATE events SET data = jsonb_set(data, '{quantity}', '2') WHERE stream_id = $1 AND revision = 0`, [
          `purchase-${purchaseId}`,
        ]);
        expect(JSON.parse((await verify()).stdout)).toMatchObject({ verified: true });
        await admin.query(`DELETE FROM events WHERE stream_id = $1 AND revision = 0`, [`purchase-${purchaseId}`]);
        const removed = JSON.parse((await verify()).stdout);
        expect(removed).toMatchObject({
          verified: false,
          failure: { streamId: `purchase-${purchaseId}`, problem: expect.stringMatching(/^was removed/) },
        });
      } finally {
        await admin.end();
      }
    }, 120_000);
  });
}
