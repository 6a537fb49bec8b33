import { CLOCK_SEPARATOR, IdempotencyClaim, IdempotencyStore, KEPT_ROW_BYTES } from '@deals/kernel';
import { randomUUID } from 'node:crypto';

export interface IdempotencyStoreUnderTest {
  /** A store as one process of the service opens it. */
  store: IdempotencyStore;
  /** Another process's store on the same backend (closed by the suite). */
  openAnother(): Promise<IdempotencyStore>;
  /** Ends a store's process as a crash would: without answering what it claimed. */
  crash(store: IdempotencyStore): Promise<void>;
  /** Whether several processes use the backend at once (else one after another: the data folder's lock). */
  concurrentProcesses: boolean;
  cleanup(): Promise<void>;
}

const HOUR = 3_600_000;
const t0 = Date.parse('2026-06-15T12:00:00Z');
const claimOf = (fingerprint = 'request-a', now = t0, partnerId = 'p-1'): IdempotencyClaim => ({
  keyId: randomUUID(),
  partnerId,
  fingerprint,
  now,
  expiresAt: now + 24 * HOUR,
  runId: randomUUID(),
});
const answer = (text: string, status = 200) => ({ status, contentType: 'application/json; charset=utf-8', body: Buffer.from(text) });

/** What every IdempotencyStore adapter promises (ports/idempotency-store.port.ts). */
export function idempotencyStoreContract(name: string, open: () => Promise<IdempotencyStoreUnderTest>): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    let subject: IdempotencyStoreUnderTest;
    const others: IdempotencyStore[] = [];
    beforeEach(async () => (subject = await open()));
    afterEach(async () => {
      for (const other of others.splice(0)) await other.close().catch(() => undefined);
      await subject.cleanup();
    });
    const another = async () => {
      const store = await subject.openAnother();
      others.push(store);
      return store;
    };

    it('gives a new key to one claim; the same request meanwhile is running, another is a mismatch', async () => {
      const claim = claimOf();
      expect(await subject.store.claim(claim)).toEqual({ kind: 'new', startedAt: t0, runId: claim.runId });
      expect(await subject.store.claim(claim)).toEqual({ kind: 'running' });
      expect(await subject.store.claim({ ...claim, fingerprint: 'request-b' })).toEqual({ kind: 'mismatch' });
    });

    it('keeps an answer and gives it back, byte for byte, until the key expires', async () => {
      const claim = claimOf();
      await subject.store.claim(claim);
      const body = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
      await subject.store.answer(claim.keyId, { status: 422, contentType: 'application/json', body });
      const again = await subject.store.claim({ ...claim, now: t0 + 23 * HOUR });
      expect(again).toEqual({ kind: 'answered', answer: { status: 422, contentType: 'application/json', body } });
      expect(await subject.store.claim({ ...claim, fingerprint: 'request-b', now: t0 + HOUR })).toEqual({ kind: 'mismatch' });
      // Expired: forgotten, whatever the request.
      expect(await subject.store.claim({ ...claim, fingerprint: 'request-b', now: t0 + 24 * HOUR, expiresAt: t0 + 48 * HOUR })).toEqual({
        kind: 'new',
        startedAt: t0 + 24 * HOUR,
        runId: claim.runId,
      });
    });

    it('resumes a released claim at its next claim, with its start and run id, once', async () => {
      const claim = claimOf();
      await subject.store.claim(claim);
      await subject.store.release(claim.keyId);
      const again = { ...claim, now: t0 + 1000, runId: 'second' };
      const outcomes = await Promise.all([subject.store.claim(again), subject.store.claim(again)]);
      expect(outcomes).toContainEqual({ kind: 'resumed', startedAt: t0, runId: claim.runId, ended: true });
      expect(outcomes).toContainEqual({ kind: 'running' });
      // Released again, and claimed by another process: the same run still.
      await subject.store.release(claim.keyId);
      const other = await another();
      expect(await other.claim({ ...claim, now: t0 + 2000, runId: 'third' })).toMatchObject({
        kind: 'resumed',
        startedAt: t0,
        runId: claim.runId,
      });
      expect(await other.claim({ ...claim, fingerprint: 'request-b' })).toEqual({ kind: 'mismatch' });
    });

    it('tells whether it holds a key, claimed or answered, until it expires', async () => {
      const claim = claimOf();
      expect(await subject.store.holds(claim.keyId, t0)).toBe(false);
      await subject.store.claim(claim);
      expect(await subject.store.holds(claim.keyId, t0)).toBe(true);
      await subject.store.answer(claim.keyId, answer('kept'));
      expect(await subject.store.holds(claim.keyId, t0 + HOUR)).toBe(true);
      expect(await (await another()).holds(claim.keyId, t0 + HOUR)).toBe(true);
      expect(await subject.store.holds(claim.keyId, t0 + 24 * HOUR)).toBe(false);
    });

    it('gives one claim of many at once the key', async () => {
      const claim = claimOf();
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => subject.store.claim(claim)));
      expect(outcomes.filter((o) => o.kind === 'new')).toEqual([{ kind: 'new', startedAt: t0, runId: claim.runId }]);
      expect(outcomes.filter((o) => o.kind === 'running')).toHaveLength(7);
    });

    it('gives the answer of a finished key to every claim of many at once, in one process or several', async () => {
      const claim = claimOf();
      await subject.store.claim(claim);
      await subject.store.answer(claim.keyId, answer('kept', 201));
      const stores = subject.concurrentProcesses ? [subject.store, await another()] : [subject.store];
      const again = { ...claim, now: t0 + 1000, runId: 'a repeat' };
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % stores.length].claim(again)));
      expect(outcomes).toEqual(Array.from({ length: 12 }, () => ({ kind: 'answered', answer: answer('kept', 201) })));
      // And again, once those are over.
      expect(await subject.store.claim(again)).toEqual({ kind: 'answered', answer: answer('kept', 201) });
    });

    it('runs a key once of many claims at once in one process or several; a key being run is running to them all', async () => {
      const claim = claimOf();
      const stores = subject.concurrentProcesses ? [subject.store, await another()] : [subject.store];
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % stores.length].claim(claim)));
      expect(outcomes.filter((o) => o.kind === 'new')).toEqual([{ kind: 'new', startedAt: t0, runId: claim.runId }]);
      expect(outcomes.filter((o) => o.kind === 'running')).toHaveLength(11);
      const repeats = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % stores.length].claim({ ...claim, runId: 'b' })));
      expect(repeats).toEqual(Array.from({ length: 12 }, () => ({ kind: 'running' })));
    });

    it('runs an expired key, not yet purged, once of many claims at once', async () => {
      const claim = claimOf();
      await subject.store.claim(claim);
      await subject.store.answer(claim.keyId, answer('old'));
      const later = { ...claim, now: t0 + 25 * HOUR, expiresAt: t0 + 49 * HOUR, runId: 'later' };
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => subject.store.claim(later)));
      expect(outcomes.filter((o) => o.kind === 'new')).toEqual([{ kind: 'new', startedAt: later.now, runId: 'later' }]);
      expect(outcomes.filter((o) => o.kind === 'running')).toHaveLength(7);
    });

    it('purges the expired keys only', async () => {
      const old = claimOf('a', t0);
      const young = claimOf('b', t0 + 2 * HOUR);
      for (const claim of [old, young]) {
        await subject.store.claim(claim);
        await subject.store.answer(claim.keyId, answer(claim.fingerprint));
      }
      expect(await subject.store.purge(t0 + 25 * HOUR)).toBeGreaterThanOrEqual(1);
      expect(await subject.store.claim({ ...young, now: t0 + 25 * HOUR })).toMatchObject({ kind: 'answered' });
      expect(await subject.store.claim({ ...old, now: t0 + 25 * HOUR, expiresAt: t0 + 49 * HOUR })).toMatchObject({ kind: 'new' });
    });

    it("leaves test clocks' worlds to purges of their own, each taking only its world's keys expired by its time", async () => {
      const [world, otherWorld] = [`p-${randomUUID()}_test${CLOCK_SEPARATOR}a`, `p-${randomUUID()}_test${CLOCK_SEPARATOR}b`];
      const [clocked, elsewhere] = [claimOf('a', t0, world), claimOf('b', t0, otherWorld)];
      for (const claim of [clocked, elsewhere]) {
        await subject.store.claim(claim);
        await subject.store.answer(claim.keyId, answer(claim.fingerprint));
      }
      await subject.store.purge(t0 + 25 * HOUR);
      expect(await subject.store.claim({ ...clocked, now: t0 + HOUR })).toMatchObject({ kind: 'answered' });
      expect(await subject.store.purge(t0 + 2 * HOUR, world)).toBe(0);
      if (subject.concurrentProcesses) {
        // Purged by a process that claims no key itself (the one running the clock's jobs), and counted there.
        const jobs = await another();
        expect(await jobs.purge(t0 + 25 * HOUR, world)).toBe(1);
        expect(jobs.keptBytes().get(world) ?? 0).toBe(0);
      } else {
        expect(await subject.store.purge(t0 + 25 * HOUR, world)).toBe(1);
        expect(subject.store.keptBytes().get(world) ?? 0).toBe(0);
      }
      expect(await subject.store.claim({ ...clocked, now: t0 + HOUR, runId: 'again' })).toMatchObject({ kind: 'new' });
      expect(await subject.store.claim({ ...elsewhere, now: t0 + HOUR })).toMatchObject({ kind: 'answered' });
    });

    it("shares answers between the processes of the service, and a dead process's claim is taken over once", async () => {
      const answered = claimOf();
      await subject.store.claim(answered);
      await subject.store.answer(answered.keyId, answer('kept'));
      const other = await another();
      expect(await other.claim(answered)).toEqual({ kind: 'answered', answer: answer('kept') });

      const cut = claimOf();
      const dying = await another();
      expect(await dying.claim(cut)).toEqual({ kind: 'new', startedAt: t0, runId: cut.runId });
      await subject.crash(dying);
      const survivors = subject.concurrentProcesses ? [subject.store, other] : [await another()];
      const later = { ...cut, now: t0 + 60_000, runId: 'a later run' };
      const after = await Promise.all(survivors.map((store) => store.claim(later)));
      // Taken over as the run it was: its start kept, so that the ids it made are found again.
      // Its process died: something of it may still be under way.
      expect(after.filter((o) => o.kind === 'resumed')).toEqual([{ kind: 'resumed', startedAt: t0, runId: cut.runId, ended: false }]);
      expect(after.filter((o) => o.kind === 'running')).toHaveLength(survivors.length - 1);
      expect(await survivors[0].claim({ ...later, fingerprint: 'request-b' })).toEqual({ kind: 'mismatch' });
    });

    it("counts what each partner's keys and answers take up, from claim to purge, and another process reads it", async () => {
      const partner = `p-${randomUUID()}`;
      const [a, b] = [claimOf('a', t0, partner), claimOf('b', t0 + 2 * HOUR, partner)];
      const before = subject.store.keptBytes().get(partner) ?? 0;
      expect(before).toBe(0);
      await subject.store.claim(a);
      expect(subject.store.keptBytes().get(partner)).toBe(KEPT_ROW_BYTES);
      await subject.store.answer(a.keyId, answer('x'.repeat(1000)));
      await subject.store.claim(b);
      await subject.store.answer(b.keyId, answer('y'.repeat(500)));
      expect(subject.store.keptBytes().get(partner)).toBe(2 * KEPT_ROW_BYTES + 1500);
      // A claim that is running or answered already adds nothing.
      await subject.store.claim(b);
      expect(subject.store.keptBytes().get(partner)).toBe(2 * KEPT_ROW_BYTES + 1500);
      await subject.store.purge(t0 + 25 * HOUR);
      expect(subject.store.keptBytes().get(partner)).toBe(KEPT_ROW_BYTES + 500);
      // A forgotten key taken by a new claim no longer counts its old answer.
      await subject.store.claim({ ...b, now: t0 + 27 * HOUR, expiresAt: t0 + 51 * HOUR });
      await subject.store.purge(t0 + 27 * HOUR);
      expect(subject.store.keptBytes().get(partner)).toBe(KEPT_ROW_BYTES);
      const other = await another();
      await other.claim(claimOf('c', t0 + 28 * HOUR, `${partner}-other`));
      await other.purge(t0);
      expect(other.keptBytes().get(partner)).toBe(KEPT_ROW_BYTES);
    });
  });
}
