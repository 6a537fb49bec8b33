import { projectionSpec, batchProjectionSpec } from './projection-spec';
import { streamCounts, streamFeed } from './sample-projections';

const a = (streamId: string) => ({ type: 'A', data: {}, streamId });
const c = (streamId: string) => ({ type: 'C', data: {}, streamId });

describe('projectionSpec', () => {
  const spec = projectionSpec(streamCounts);

  it('records the events it is given: ids, each stream its revisions, the log increasing positions', () => {
    const x1 = a('x');
    const run = spec.given(x1, a('y')).when(a('x'), { type: 'B', data: {}, streamId: 'x', metadata: { partnerId: 'p' } });
    expect(run.recorded.map((e) => [e.id, e.streamId, e.revision, e.position])).toEqual([
      ['e1', 'x', 0, '00000000000000000001'],
      ['e2', 'y', 0, '00000000000000000002'],
      ['e3', 'x', 1, '00000000000000000003'],
      ['e4', 'x', 2, '00000000000000000004'],
    ]);
    expect(run.recorded[3].metadata).toEqual({ occurredAt: '2026-01-01T00:00:00Z', partnerId: 'p' });
    expect([run.positionOf(x1), run.lastPosition]).toEqual(['00000000000000000001', '00000000000000000004']);
  });

  it('leaves the documents, and tells what the last batch changed', () => {
    const run = spec.given(a('x'), a('y')).when(a('x'), a('x'));
    run.thenDocuments(
      { _id: 'y', _pos: '00000000000000000002', count: 1, last: 'A' },
      { _id: 'x', _pos: '00000000000000000004', count: 3, last: 'A' },
    );
    run.thenChanged({ _id: 'x', _pos: '00000000000000000004', count: 3, last: 'A' });
    run.thenDocumentMatches('x', { count: 3 });
    expect(run.states().map(({ documents }) => documents.get('x')?.count)).toEqual([1, 1, 3]);
    run.thenReplayChangesNothing();
    run.thenSameInOneBatch();
  });

  it('folds onto the documents it is given, those newer than an event keeping it out', () => {
    const stored = { _id: 'x', count: 5, last: 'B' };
    spec.givenDocuments(stored).given(a('x')).thenDocument('x', { _id: 'x', _pos: '00000000000000000001', count: 6, last: 'A' });
    spec
      .givenDocuments({ ...stored, _pos: '00000000000000000009' })
      .given(a('x'))
      .thenChanged();
  });

  it('fails a check the documents do not meet, and asks for a document none left', () => {
    const run = spec.given(a('x'));
    expect(() => run.thenDocuments()).toThrow();
    expect(() => run.thenChanged()).toThrow();
    expect(() => run.document('y')).toThrow('no document');
    expect(() => run.positionOf(a('x'))).toThrow('not given');
  });

  it('sends a projection that folds its batches itself to batchProjectionSpec, and back', () => {
    expect(() => projectionSpec(streamFeed)).toThrow('batchProjectionSpec');
    expect(() => batchProjectionSpec(streamCounts)).toThrow('projectionSpec');
  });
});

describe('batchProjectionSpec', () => {
  const spec = batchProjectionSpec(streamFeed);

  it('folds each batch through applyBatch, over the documents the batches before left', async () => {
    const run = spec.given(c('x'), a('z')).when(c('y'), c('x'));
    await run.thenDocuments({ _id: 'all', _pos: '00000000000000000004', ids: ['x', 'y', 'x'] });
    await run.thenChanged({ _id: 'all', _pos: '00000000000000000004', ids: ['x', 'y', 'x'] });
    expect(await run.lastBatchReads()).toEqual([['all']]);
    await run.thenSameInOneBatch();
    await expect(run.thenChanged()).rejects.toThrow();
  });
});
