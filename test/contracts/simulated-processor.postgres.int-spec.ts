import { PostgresPaymentVault } from '@deals/adapters/payment-gateway/simulated/postgres-payment-vault';
import { SimulatedPaymentGateway } from '@deals/adapters/payment-gateway/simulated/simulated-payment-gateway.adapter';
import { SqlitePaymentVault } from '@deals/adapters/payment-gateway/simulated/sqlite-payment-vault';
import { card, pepper, simulatedProcessorContract } from '@deals/testing/contracts/simulated-processor.contract';
import { Client } from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`simulated processor contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  simulatedProcessorContract('postgresql', async () => {
    const database = await createTestDatabase('vault');
    return {
      open: () => new PostgresPaymentVault(database.url),
      concurrentProcesses: true,
      cleanup: () => database.drop(),
    };
  });

  describe('the simulated processor on PostgreSQL, replacing a vault file', () => {
    let database: { url: string; drop: () => Promise<void> };
    let dir: string;
    beforeEach(async () => {
      database = await createTestDatabase('vaultfile');
      dir = mkdtempSync(join(tmpdir(), 'vault-file-'));
    });
    afterEach(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('copies the cards, charges and refunds of the file when its tables are first made, so earlier cards and keys answer as before', async () => {
      const file = join(dir, 'payment-vault.sqlite');
      const before = new SimulatedPaymentGateway(new SqlitePaymentVault(file), { pepper });
      const { token } = await before.tokenize(card('4242424242424242'));
      const declining = (await before.tokenize(card('4000000000000002'))).token;
      const charged = await before.charge({ token, amountCents: 1500, idempotencyKey: 'p1', description: 'deal' });
      if (charged.status !== 'approved') throw new Error('charge not approved');
      const refunded = await before.refund({ chargeId: charged.chargeId, amountCents: 1000, idempotencyKey: 'r1' });
      await before.close();

      // Two processes start on the new tables at once: one makes them and copies the file, once.
      const [a, b] = [0, 1].map(() => new SimulatedPaymentGateway(new PostgresPaymentVault(database.url, file), { pepper }));
      try {
        const [again, outcome] = await Promise.all([
          a.charge({ token, amountCents: 1500, idempotencyKey: 'p1', description: 'deal' }),
          b.chargeOutcome('p1'),
        ]);
        expect(again).toEqual(charged);
        expect(outcome).toEqual(charged);
        expect(await b.refundOutcome('r1')).toEqual(refunded);
        expect(await a.refund({ chargeId: charged.chargeId, amountCents: 600, idempotencyKey: 'r2' })).toMatchObject({ status: 'refused' });
        expect(await b.refund({ chargeId: charged.chargeId, amountCents: 500, idempotencyKey: 'r3' })).toMatchObject({
          status: 'refunded',
        });
        expect(await a.charge({ token: declining, amountCents: 900, idempotencyKey: 'p2', description: 'deal' })).toEqual({
          status: 'declined',
          reason: 'card declined',
        });
        const client = new Client({ connectionString: database.url });
        await client.connect();
        const counts = await client.query(
          'SELECT (SELECT count(*) FROM payment_cards)::int AS cards, (SELECT count(*) FROM payment_charges)::int AS charges',
        );
        await client.end();
        expect(counts.rows[0]).toEqual({ cards: 2, charges: 2 });
      } finally {
        await Promise.all([a.close(), b.close()]);
      }

      // A process of the earlier version, still running, charges through the file meanwhile: the
      // next start copies what changed, and the charge is found (its key answers it, never twice).
      const late = new SimulatedPaymentGateway(new SqlitePaymentVault(file), { pepper });
      const lateCharge = await late.charge({ token, amountCents: 400, idempotencyKey: 'p-late', description: 'deal' });
      const lateCard = await late.tokenize(card('5555555555554444'));
      await late.close();
      const restarted = new SimulatedPaymentGateway(new PostgresPaymentVault(database.url, file), { pepper });
      try {
        expect(await restarted.chargeOutcome('p-late')).toEqual(lateCharge);
        expect(await restarted.charge({ token, amountCents: 400, idempotencyKey: 'p-late', description: 'deal' })).toEqual(lateCharge);
        expect(
          await restarted.charge({ token: lateCard.token, amountCents: 400, idempotencyKey: 'p3', description: 'deal' }),
        ).toMatchObject({
          status: 'approved',
        });
        expect(await restarted.chargeOutcome('p1')).toEqual(charged);
      } finally {
        await restarted.close();
      }
    });

    it('starts empty where there is no file to copy', async () => {
      const gateway = new SimulatedPaymentGateway(new PostgresPaymentVault(database.url, join(dir, 'none.sqlite')), { pepper });
      try {
        expect(await gateway.chargeOutcome('p1')).toBeNull();
        const { token } = await gateway.tokenize(card('4242424242424242'));
        expect(await gateway.charge({ token, amountCents: 100, idempotencyKey: 'p1', description: 'deal' })).toMatchObject({
          status: 'approved',
        });
      } finally {
        await gateway.close();
      }
    });
  });

  describe('the simulated processor on PostgreSQL, its connection cut', () => {
    let database: { url: string; drop: () => Promise<void> };
    let proxy: TcpProxy;
    beforeAll(async () => {
      database = await createTestDatabase('vaultcut');
      const url = new URL(database.url);
      proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    });
    afterAll(async () => {
      await proxy?.close();
      await database?.drop();
    });

    it('makes a charge again when its connection is cut before or after the write (its answer lost): one charge a key', async () => {
      const url = new URL(database.url);
      url.port = String(proxy.port);
      const gateway = new SimulatedPaymentGateway(new PostgresPaymentVault(url.toString()), { pepper });
      try {
        const { token } = await gateway.tokenize(card('4242424242424242'));
        // The charge's statement (named: a connection sends it by its name once it has prepared it) cut off before
        // it reaches the server, once the server has it, and in place of its answer.
        const charging = (chunk: Buffer) => chunk.includes('deals_vault_charge');
        const outcomes = [];
        for (const [i, at] of (['before', 'sent', 'answered'] as const).entries()) {
          const cut = proxy.cutAt(charging, at);
          outcomes.push(await gateway.charge({ token, amountCents: 700, idempotencyKey: `cut-${i}`, description: 'deal' }));
          await cut;
        }
        for (const [i, outcome] of outcomes.entries()) {
          expect(outcome).toEqual({ status: 'approved', chargeId: expect.stringMatching(/^ch_/) });
          expect(await gateway.chargeOutcome(`cut-${i}`)).toEqual(outcome);
        }
      } finally {
        await gateway.close();
      }
    });
  });
}
