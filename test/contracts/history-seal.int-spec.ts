import {
  checkpointSigningKey,
  HistorySealer,
  ManualClock,
  MAX_CHECKPOINT_EVENTS,
  proveStream,
  RecordedEvent,
  verifyHistory,
  verifyStreamProof,
} from '@deals/kernel';
import { SqliteSealStore } from '@deals/adapters/seal-store/sqlite-seal-store.adapter';
import { MemoryEventStore } from '@deals/testing';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

/**
 * The sealer and the verifier over a log in memory and a seal file: a log sealed verifies, and each
 * way of tampering with the stored events after their seal is named at the first event it touches.
 */
describe('the history seal: sealing and verifying', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const { privateKey, publicKey } = checkpointSigningKey(Buffer.from('an installation secret of 32 bytes'));
  let dir: ReturnType<typeof tempDir>;
  let log: MemoryEventStore;
  let seals: SqliteSealStore;
  let sealer: HistorySealer;

  const append = async (streamId: string, count: number) => {
    for (let i = 0; i < count; i++) {
      const before = await log.readStream(streamId);
      await log.append(
        streamId,
        [
          {
            id: `${streamId}-${before.length}`,
            type: 'Happened',
            data: { n: before.length, nested: { a: [1, 2] } },
            metadata: { occurredAt: clock.now().toISOString(), actor: 'test' },
          },
        ],
        before.length === 0 ? 'no_stream' : before.length - 1,
      );
    }
  };
  /** The stored event of `streamId` at `revision` (the object the store keeps: editing it edits the log). */
  const stored = (streamId: string, revision: number): RecordedEvent => log.log.streams.get(streamId)![revision];

  beforeEach(async () => {
    dir = tempDir('history-seal');
    log = new MemoryEventStore();
    seals = new SqliteSealStore(join(dir.path, 'seals.sqlite'));
    sealer = new HistorySealer(log, seals, clock, privateKey);
    await append('purchase-a', 3);
    await append('purchase-b', 2);
    await append('inventory-x', 4);
    await sealer.sealNext();
    await append('purchase-a', 2);
  });
  afterEach(async () => {
    await seals.close();
    dir.remove();
  });

  it('verifies a log sealed in checkpoints, and counts what is not sealed yet', async () => {
    expect(await verifyHistory(log, seals, publicKey)).toEqual({ verified: true, events: 9, checkpoints: 1, unsealed: 2, failure: null });
    expect(await sealer.sealNext()).toMatchObject({ number: 2, count: 2 });
    expect(await sealer.sealNext()).toBeNull();
    expect(await verifyHistory(log, seals, publicKey)).toMatchObject({ verified: true, events: 11, checkpoints: 2, unsealed: 0 });
    expect(await verifyHistory(log, seals, publicKey, { from: stored('purchase-a', 3).position })).toMatchObject({
      verified: true,
      events: 2,
      checkpoints: 1,
    });
  });

  it('names an event whose content was edited', async () => {
    (stored('purchase-b', 1).data as { n: number }).n = 7;
    expect((await verifyHistory(log, seals, publicKey)).failure).toEqual({
      checkpoint: 1,
      position: stored('purchase-b', 1).position,
      streamId: 'purchase-b',
      revision: 1,
      problem: 'was changed: its content does not match its seal',
    });
  });

  it('checks one stream by its proof alone: verified, not sealed yet, an edit, a removal and a foreign key named', async () => {
    const proof = () => proveStream(log, seals, 'purchase-a');
    expect(verifyStreamProof(await proof(), publicKey)).toEqual({
      verified: true,
      failure: null,
      events: [0, 1, 2, 3, 4].map((revision) => ({
        position: stored('purchase-a', revision).position,
        revision,
        type: 'Happened',
        result: revision < 3 ? 'verified' : 'not sealed yet',
      })),
    });
    expect(verifyStreamProof(await proof(), generateKeyPairSync('ed25519').publicKey).failure).toMatch(/checkpoint 1 is not signed/);
    (stored('purchase-a', 1).data as { n: number }).n = 9;
    expect(verifyStreamProof(await proof(), publicKey)).toMatchObject({
      verified: false,
      failure: `the event at position ${stored('purchase-a', 1).position} (Happened, revision 1) does not match: its content was changed since it was sealed`,
    });
    (stored('purchase-a', 1).data as { n: number }).n = 1;
    // An event whose seal was taken away (its row moved to another stream) reads as not sealed: it was.
    const unsealed = await proof();
    Object.assign(unsealed.events[1], { hash: null, link: null, checkpoint: null, index: null, proof: [] });
    expect(verifyStreamProof(unsealed, publicKey).failure).toMatch(/revision 1\) does not match: it is not sealed, though events after it/);
    // A stream cut at its start is not taken for a whole one.
    const cut = await proof();
    cut.events.splice(0, 2);
    expect(verifyStreamProof(cut, publicKey).failure).toMatch(/revision 2\) does not match: the stream's revision 0 is missing/);
    log.log.streams.get('purchase-a')!.splice(1, 1);
    expect(verifyStreamProof(await proof(), publicKey).failure).toMatch(/revision 1 is missing before it/);
  });

  it('names an event removed, and one whose place another took', async () => {
    const removed = log.log.streams.get('inventory-x')!.splice(2, 1)[0];
    expect((await verifyHistory(log, seals, publicKey)).failure).toMatchObject({
      position: removed.position,
      streamId: 'inventory-x',
      revision: 2,
      problem: 'was removed: it was sealed and is no longer in the log',
    });
  });

  it('names events swapped in the log (their positions exchanged)', async () => {
    const [first, second] = [stored('purchase-a', 0), stored('purchase-a', 1)];
    [first.position, second.position] = [second.position, first.position];
    expect((await verifyHistory(log, seals, publicKey)).failure).toMatchObject({
      position: stored('purchase-a', 1).position,
      streamId: 'purchase-a',
    });
  });

  it('names a checkpoint not signed by the service’s key, and a seal changed to match an edit', async () => {
    const other = generateKeyPairSync('ed25519');
    expect((await verifyHistory(log, seals, other.publicKey)).failure).toMatchObject({
      checkpoint: 1,
      position: null,
      problem: 'is not signed by the service’s key',
    });
    // An edit whose seal was made again to match it (without the key, the checkpoint's root cannot be).
    const edited = stored('purchase-a', 2);
    (edited.data as { n: number }).n = 99;
    const { eventHash, streamLink } = await import('@deals/kernel');
    const db = (seals as unknown as { open(): unknown; db: import('better-sqlite3').Database }).db;
    const before = Buffer.from((await seals.sealOf('purchase-a', 1))!.link, 'hex');
    const hash = eventHash(edited);
    db.prepare('UPDATE event_seals SET hash = ?, link = ? WHERE stream_id = ? AND revision = ?').run(
      hash.toString('hex'),
      streamLink(before, hash).toString('hex'),
      'purchase-a',
      2,
    );
    expect((await verifyHistory(log, seals, publicKey)).failure).toMatchObject({
      checkpoint: 1,
      position: null,
      problem: 'its root does not match its events’ seals',
    });
  });

  it(`seals a long log in checkpoints of at most ${MAX_CHECKPOINT_EVENTS} events`, async () => {
    await append('hot-deal', MAX_CHECKPOINT_EVENTS + 10);
    expect(await sealer.sealAll()).toBe(2);
    const all = await seals.checkpoints(1, 10);
    expect(all.map((c) => c.count)).toEqual([9, MAX_CHECKPOINT_EVENTS, 12]);
    expect(await verifyHistory(log, seals, publicKey)).toMatchObject({
      verified: true,
      events: 9 + MAX_CHECKPOINT_EVENTS + 12,
      unsealed: 0,
    });
  }, 60_000);
});
