import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiProcess, freePort } from '../../support/api-process';
import { tempDir } from '../../support/temp-dir';
import { DECLINED_TEST_CARD, TEST_CARDS } from '../../support/test-cards';

const ROOT = join(__dirname, '..', '..', '..');
const NODE_TLS_WARNING = /^\(node:\d+\) Warning: Setting the NODE_TLS_REJECT_UNAUTHORIZED[^\n]*\n\(Use `node --trace-warnings[^\n]*\n/;

/** Runs the README's quick start as a newcomer does, beside the API serving `dataDir` (found by the address it recorded there). */
function quickstart(
  dataDir: string,
  cardNumber: string,
  example = 'quickstart',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', '@swc-node/register', `clients/typescript/examples/${example}.ts`],
      {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dataDir, CARD_NUMBER: cardNumber, NODE_TLS_REJECT_UNAUTHORIZED: '0', PORT: '' },
        timeout: 60_000,
      },
      // Without Node's own warning that NODE_TLS_REJECT_UNAUTHORIZED trusts any certificate.
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr: stderr.replace(NODE_TLS_WARNING, '') }),
    );
  });
}

describe('the quick start (clients/typescript/examples/quickstart.ts)', () => {
  jest.setTimeout(120_000);
  const dir = tempDir('quickstart');
  let api: ApiProcess;
  beforeAll(async () => {
    api = await ApiProcess.start(dir.path, await freePort(), { DEMO_DATA: 'on' });
  });
  afterAll(async () => {
    await api?.stop();
    dir.remove();
  });

  it('buys and redeems with an approved card, printing the purchase id, and shows the refusal of a second redemption', async () => {
    const ran = await quickstart(dir.path, TEST_CARDS.visa);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const [foreseen, bought, redeemed, again] = ran.stdout.trim().split('\n');
    const [purchaseId, paymentState, amount, printUrl] = bought.split(' ');
    // The dry run foresaw the amount charged, and units left.
    const [foreseenAmount, unitsLeft] = foreseen.split(' ');
    expect([foreseenAmount, Number(unitsLeft) > 0]).toEqual([amount, true]);
    const demo = JSON.parse(readFileSync(join(dir.path, 'demo-partner.json'), 'utf8')) as { api_key: string };
    expect((await api.call('GET', `/purchases/${purchaseId}?api_key=${demo.api_key}`)).body.purchase.id).toBe(purchaseId);
    expect([paymentState, Number(amount) > 0, printUrl.startsWith('https://')]).toEqual(['charged', true, true]);
    expect(redeemed).toBe('redeemed');
    expect(again).toBe('422 validation_failed state is already redeemed');
  });

  it("prints the API's error body and ends with status 1 when the card is declined", async () => {
    const ran = await quickstart(dir.path, DECLINED_TEST_CARD);
    expect(ran.code).toBe(1);
    // The dry run's line (it charges nothing, so the card is not tried), then the purchase's refusal.
    expect(ran.stdout).toMatch(/^\d+ \d+\n$/);
    expect(ran.stderr).toMatch(/^buying: 422/);
    expect(JSON.parse(ran.stderr.slice(ran.stderr.indexOf('{')))).toMatchObject({ status: 'error', error_type: 'declined' });
  });

  it('the sandbox example (docs/sandbox.md) acts on the sandbox with the test key: a decline, a purchase, its own feed, a test clock', async () => {
    const ran = await quickstart(dir.path, '', 'sandbox');
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(ran.stdout.trim().split('\n')).toEqual([
      'livemode false',
      '422 declined',
      'charged',
      'purchase.completed false',
      'reservation.expired 300',
    ]);
  });
});
