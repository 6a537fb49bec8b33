import { EventSeal, SealRaced, SealStore, SignedCheckpoint } from '@deals/kernel';

export interface SealStoreUnderTest {
  store: SealStore;
  /** Another process's store on the same backend (closed by the suite). */
  openAnother(): Promise<SealStore>;
  cleanup(): Promise<void>;
}

const checkpoint = (number: number, from: string, to: string, count: number): SignedCheckpoint => ({
  number,
  previous: number === 1 ? null : `hash-of-${number - 1}`,
  fromPosition: from,
  toPosition: to,
  count,
  root: `root-${number}`,
  sealedAt: '2026-06-15T12:00:00.000Z',
  signature: `signature-${number}`,
});
const seal = (position: string, streamId: string, revision: number, checkpointNumber: number, index: number): EventSeal => ({
  position,
  streamId,
  revision,
  hash: `hash-${position}`,
  link: `link-${position}`,
  checkpoint: checkpointNumber,
  index,
});

/** What every SealStore adapter promises (ports/seal-store.port.ts). */
export function sealStoreContract(name: string, open: () => Promise<SealStoreUnderTest>): void {
  describe(`SealStore contract: ${name}`, () => {
    let subject: SealStoreUnderTest;
    const others: SealStore[] = [];
    beforeEach(async () => (subject = await open()));
    afterEach(async () => {
      for (const other of others.splice(0)) await other.close().catch(() => undefined);
      await subject.cleanup();
    });

    it('keeps checkpoints in a line with their seals, and gives back each by checkpoint and by stream, in order', async () => {
      expect(await subject.store.lastCheckpoint()).toBeNull();
      const first = [seal('001', 'a', 0, 1, 0), seal('002', 'b', 0, 1, 1), seal('003', 'a', 1, 1, 2)];
      await subject.store.write(checkpoint(1, '001', '003', 3), first);
      const second = [seal('004', 'a', 2, 2, 0)];
      await subject.store.write(checkpoint(2, '004', '004', 1), second);
      expect(await subject.store.lastCheckpoint()).toEqual(checkpoint(2, '004', '004', 1));
      expect(await subject.store.checkpoints(1, 10)).toEqual([checkpoint(1, '001', '003', 3), checkpoint(2, '004', '004', 1)]);
      expect(await subject.store.checkpoints(2, 10)).toEqual([checkpoint(2, '004', '004', 1)]);
      expect(await subject.store.sealsOf(1)).toEqual(first);
      expect(await subject.store.sealsOfStream('a')).toEqual([first[0], first[2], second[0]]);
      expect(await subject.store.sealOf('a', 1)).toEqual(first[2]);
      expect(await subject.store.sealOf('a', 3)).toBeNull();
      expect(await subject.store.streamLinks(['a', 'b', 'c'])).toEqual(
        new Map([
          ['a', { revision: 2, link: 'link-004' }],
          ['b', { revision: 0, link: 'link-002' }],
        ]),
      );
    });

    it("refuses a second sealer's checkpoint of a number taken, writing none of its seals", async () => {
      await subject.store.write(checkpoint(1, '001', '001', 1), [seal('001', 'a', 0, 1, 0)]);
      const other = await subject.openAnother();
      others.push(other);
      await expect(other.write(checkpoint(1, '002', '002', 1), [seal('002', 'b', 0, 1, 0)])).rejects.toBeInstanceOf(SealRaced);
      expect(await subject.store.sealsOfStream('b')).toEqual([]);
      expect((await subject.store.lastCheckpoint())?.fromPosition).toBe('001');
    });

    it('says whether a process that seals is running: one that declared itself, until it closes its store', async () => {
      expect(await subject.store.sealerRunning()).toBe(false);
      const sealer = await subject.openAnother();
      others.push(sealer);
      await sealer.declareSealer();
      await sealer.declareSealer();
      expect(await subject.store.sealerRunning()).toBe(true);
      expect(await sealer.sealerRunning()).toBe(true);
      await sealer.close();
      expect(await subject.store.sealerRunning()).toBe(false);
    });
  });
}
