import { EventStore, handleCommand, ManualClock, OPERATOR, PERSONAL_ENVELOPE, PersonalDataEventStore } from '@deals/kernel';
import { purchaseDecider } from '@deals/purchasing/domain/purchase/purchase.decider';
import { purchaseStream } from '@deals/purchasing/domain/purchase/purchase.events';
import { resaleBuyerSubject } from '@deals/purchasing/domain/purchase/resale-buyer';
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';
import { tempDir } from '../../support/temp-dir';

/** What a reseller tells of its buyer: every one of these must be in the log only as ciphertext, and gone once erased. */
const BUYER = {
  first_name: 'Quillon',
  last_name: 'Zarathustra',
  address_type: 'home',
  address1: '88 Obsidian Crescent',
  address2: 'Flat Yonder',
  postal_code: '60657',
  city: 'Chicago',
  state: 'IL',
  country: 'US',
  telephone: '+1 312 555 0147',
};
/** The texts searched for, byte for byte, in the log's rows and in every file of the data folder. */
const TRACES = ['Quillon', 'Zarathustra', 'Obsidian Crescent', 'Flat Yonder', '555 0147'];

/** Each event of the log's file (read as stored, beside the service) that holds a trace: its type and the trace. */
function tracesInLog(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT type, data, metadata FROM events').all() as Array<{ type: string; data: string; metadata: string }>;
    expect(rows.length).toBeGreaterThan(0);
    return rows.flatMap((row) =>
      TRACES.filter((trace) => `${row.data}${row.metadata}`.includes(trace)).map((trace) => `${row.type}: ${trace}`),
    );
  } finally {
    db.close();
  }
}

/** The stored data of the log's events of these types, as written to the file. */
function storedEvents(dataDir: string, types: string[]): Array<{ type: string; data: Record<string, unknown> }> {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(`SELECT type, data FROM events WHERE type IN (${types.map(() => '?').join(', ')})`).all(...types) as Array<{
      type: string;
      data: string;
    }>;
    return rows.map((row) => ({ type: row.type, data: JSON.parse(row.data) as Record<string, unknown> }));
  } finally {
    db.close();
  }
}

/** Every file under `dir` holding any trace: file and trace. */
function tracesInFolder(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) return void readdirSync(path).forEach((name) => visit(join(path, name)));
    const bytes = readFileSync(path);
    for (const trace of TRACES) if (bytes.includes(trace)) found.push(`${relative(dir, path)}: ${trace}`);
  };
  visit(dir);
  return found;
}

type AuditEvents = Array<{ type: string; data: { buyer?: Record<string, unknown>; terms?: { buyer?: Record<string, unknown> } } }>;

/** What the auditor's history of a purchase shows of its buyer: the claim's terms, then the sale's. */
const buyerShown = (events: AuditEvents) => [
  events.find((event) => event.type === 'TransactionReferenceClaimed')!.data.terms!.buyer,
  events.find((event) => event.type === 'PurchaseResold')!.data.buyer,
];

const ERASED = Object.fromEntries(Object.keys(BUYER).map((field) => [field, null]));

/**
 * A reseller sale's buyer, end to end: its names, address and telephone are in the log only as
 * ciphertext under the key of the partner's transaction, and the answers show them; the partner's
 * erasure call deletes the key, and then neither the log nor any file, view or answer holds them,
 * while the sale, its coupons and amounts stay.
 */
describe("a reseller sale's buyer, encrypted in the log and erased", () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const dir = tempDir('resale-buyer');
  let api: TestApi;
  let basic: { username: string; password: string };
  let apiKey: string;
  let partnerId: string;
  let other: { username: string; password: string };
  let auditorKey: string;
  let purchaseId: string;
  let sale: Record<string, unknown>;

  beforeAll(async () => {
    api = await TestApi.start({ clock, dataDir: dir.path });
    const partner = await api.createPartner('Reseller');
    ({ apiKey, partnerId } = partner);
    basic = { username: partner.username, password: partner.password };
    const second = await api.createPartner('Other reseller');
    other = { username: second.username, password: second.password };
    auditorKey = (await api.createPartner('Audit office', 'auditor')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...ongoingShipped, quantity: 10, max_per_user: undefined },
      { ...spaDay, quantity: 10 },
    ]);
    sale = {
      deal_id: ongoingShipped.id,
      quantity: 2,
      transaction_reference: 'order-quillon',
      transaction_date: '2026-06-15T11:59:00Z',
      transaction_amount: 7000,
      ...BUYER,
    };
    const recorded = await api.call('POST', '/api/v3/resellers/purchases', { basic, body: sale });
    expect(recorded.status).toBe(200);
    purchaseId = recorded.body.id;
    await api.settle();
  });
  afterAll(async () => {
    await api?.stop();
    dir.remove();
  });

  const audit = async (id: string) => (await api.call('GET', `/audit/purchases/${id}`, { apiKey: auditorKey })).body.events as AuditEvents;

  it('is written to the log only as ciphertext under the key of the transaction, and the answers show it', async () => {
    expect(tracesInLog(dir.path)).toEqual([]);
    // No view keeps it either: no file of the data folder holds it in clear.
    expect(tracesInFolder(dir.path)).toEqual([]);
    const stored = storedEvents(dir.path, ['TransactionReferenceClaimed', 'PurchaseResold']);
    expect(stored.map((event) => event.type).sort()).toEqual(['PurchaseResold', 'TransactionReferenceClaimed']);
    for (const event of stored)
      expect(event.data[PERSONAL_ENVELOPE]).toMatchObject({ owner: resaleBuyerSubject(partnerId, 'order-quillon') });
    expect(buyerShown(await audit(purchaseId))).toEqual([BUYER, BUYER]);
  });

  it('is erased by its partner alone, answered with its time, and the same time when asked again', async () => {
    const path = `/api/v3/resellers/purchases/${purchaseId}/buyer`;
    expect((await api.call('DELETE', path, { basic: other })).status).toBe(404);
    expect((await api.call('DELETE', '/api/v3/resellers/purchases/no-such-sale/buyer', { basic })).status).toBe(404);
    // A purchase the service charged has a user for its buyer: erased as a user.
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'card-buyer@example.com' } })).body.user_id;
    const card = { number: '4242424242424242', verification_value: '123', month: '12', year: '2030', zip_code: '60601' };
    const charged = await api.call('POST', '/v1/purchases/full.json', {
      apiKey,
      body: { deal_id: spaDay.id, quantity: 1, user_id: userId, credit_card: card },
    });
    expect(charged.status).toBe(200);
    const notResold = await api.call('DELETE', `/api/v3/resellers/purchases/${charged.body.purchase.id}/buyer`, { basic });
    expect([notResold.status, notResold.body.errors?.[0]?.message]).toEqual([422, expect.stringMatching(/not a reseller's sale/)]);

    clock.advance(60_000);
    const erased = await api.call('DELETE', path, { basic });
    expect([erased.status, erased.body]).toEqual([
      200,
      { status: 'success', purchase_id: purchaseId, erased_at: clock.now().toISOString() },
    ]);
    clock.advance(60_000);
    expect((await api.call('DELETE', path, { basic })).body.erased_at).toBe(erased.body.erased_at);
  });

  it('is gone from the answers; the sale, its coupons and amounts stay', async () => {
    expect(buyerShown(await audit(purchaseId))).toEqual([ERASED, ERASED]);
    const purchase = await api.call('GET', `/purchases/${purchaseId}`, { apiKey });
    expect([purchase.status, purchase.body.purchase.amount, purchase.body.purchase.coupons.length]).toEqual([200, 7000, 2]);
    const coupon = await api.call('GET', `/api/v3/coupons/${purchase.body.purchase.coupons[0].id}`, { basic });
    expect([coupon.status, coupon.body.coupon.state]).toEqual([200, 'valid']);
    // A retry of the same transaction answers the first sale, and writes nothing of the buyer again.
    const retried = await api.call('POST', '/api/v3/resellers/purchases', { basic, body: sale });
    expect([retried.status, retried.body.id, retried.body.amount]).toEqual([200, purchaseId, 7000]);
    expect(await api.get(PersonalDataEventStore).isErased(resaleBuyerSubject(partnerId, 'order-quillon'))).toBe(true);
  });

  it('leaves no trace in the log nor any file of the data folder, after a rebuild of the views too', async () => {
    await api.settle();
    await api.stop();
    expect(tracesInLog(dir.path)).toEqual([]);
    expect(tracesInFolder(dir.path)).toEqual([]);
    expect((await runCli(dir.path, ['projections:rebuild'])).code).toBe(0);
    expect(tracesInFolder(dir.path)).toEqual([]);
    const verified = await runCli(dir.path, ['audit:verify', '--json']);
    expect([verified.code, JSON.parse(verified.stdout)]).toEqual([0, expect.objectContaining({ verified: true })]);
    api = await TestApi.start({ clock, dataDir: dir.path });
    expect(buyerShown(await audit(purchaseId))).toEqual([ERASED, ERASED]);
  }, 120_000);

  it('finishes at the next start an erasure a stop interrupted once it was recorded (its key still kept)', async () => {
    const recorded = await api.call('POST', '/api/v3/resellers/purchases', {
      basic,
      body: { ...sale, transaction_reference: 'order-interrupted' },
    });
    const id = recorded.body.id;
    const subject = resaleBuyerSubject(partnerId, 'order-interrupted');
    // The erasure recorded as its first step does, and the process stopped before the key's deletion.
    const command = { type: 'EraseResaleBuyer' as const, data: { purchaseId: id, partnerId: null, by: 'operator' as const } };
    await handleCommand(api.get(EventStore), purchaseStream(id), purchaseDecider, command, { now: clock.now(), metadata: OPERATOR });
    await api.settle();
    expect(await api.get(PersonalDataEventStore).isErased(subject)).toBe(false);
    await api.stop();
    api = await TestApi.start({ clock, dataDir: dir.path });
    expect(await api.get(PersonalDataEventStore).isErased(subject)).toBe(true);
    expect(buyerShown(await audit(id))).toEqual([ERASED, ERASED]);
  }, 60_000);

  it('is an operator’s to ask too, of any partner’s sale (resellers:erase-buyer)', async () => {
    const recorded = await api.call('POST', '/api/v3/resellers/purchases', {
      basic: other,
      body: { ...sale, transaction_reference: 'order-operator' },
    });
    await api.stop();
    const erased = await runCli(dir.path, ['resellers:erase-buyer', recorded.body.id, '--json']);
    expect([erased.code, JSON.parse(erased.stdout)]).toEqual([0, { purchase_id: recorded.body.id, erased_at: expect.any(String) }]);
    const unknown = await runCli(dir.path, ['resellers:erase-buyer', 'no-such-sale']);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringMatching(/not found/)]);
    expect(tracesInLog(dir.path)).toEqual([]);
    api = await TestApi.start({ clock, dataDir: dir.path });
    expect(buyerShown(await audit(recorded.body.id))).toEqual([ERASED, ERASED]);
  }, 60_000);
});
