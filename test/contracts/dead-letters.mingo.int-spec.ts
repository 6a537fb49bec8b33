import { MingoViewStore } from '@deals/adapters/view-store/mingo/mingo-view-store.adapter';
import { defineProjection, listDeadLetters, Projection, ProjectionRunner, ViewDocument } from '@deals/kernel';
import { deadLettersContract } from '@deals/testing/contracts/dead-letters.contract';
import { MemoryEventStore } from '@deals/testing/memory-event-store';
import { tempDir } from '../support/temp-dir';

// The embedded store takes any JSON document: its dead letters come from a fold that throws.
deadLettersContract('embedded (mingo)', async () => {
  const dir = tempDir('dead-letters');
  const views = new MingoViewStore(dir.path);
  return {
    views,
    cleanup: async () => {
      await views.close();
      dir.remove();
    },
  };
});

/**
 * The embedded store saves a view's commits to its file a little later, file by file: a letter must
 * reach its file before the view's checkpoint passes its event, or a crash between the two saves
 * would skip the event with no letter left of it.
 */
describe('embedded view store: a dead letter is on disk before the checkpoint that passes its event', () => {
  const dir = tempDir('dead-letters-saved');
  afterAll(() => dir.remove());

  it('is read by another instance (as after a crash) at once, whatever the save delays', async () => {
    const store = new MemoryEventStore();
    // Saves so late that only a save made at once reaches the file while the test runs.
    const views = new MingoViewStore(dir.path, { documentsMs: 600_000, checkpointMs: 600_000 });
    const fold = defineProjection<ViewDocument>({
      name: 'throwing',
      handles: ['Thrown'],
      indexes: [],
      documentIds: () => ['one'],
      evolve: () => {
        throw new Error('value: must not be thrown');
      },
    }) as Projection;
    const runner = new ProjectionRunner(store, views, fold, { log: () => undefined, error: () => undefined });
    await views.define('throwing', []);
    await runner.start();
    try {
      const { position } = store.elsewhere('thrown-1', { type: 'Thrown', data: {} });
      expect(await runner.waitFor(position, 30_000)).toBe(true);
      const again = new MingoViewStore(dir.path);
      try {
        expect((await listDeadLetters(again, 'throwing')).map((letter) => letter.eventType)).toEqual(['Thrown']);
      } finally {
        await again.close();
      }
    } finally {
      await runner.stop();
      await views.close();
    }
  });
});
