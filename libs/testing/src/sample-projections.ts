import { defineProjection, ViewDocument } from '@deals/kernel';

/** A document a stream: how many A and B events it has had, and the last one's type. */
export interface StreamCount extends ViewDocument {
  count: number;
  last: string;
}

/** One document listing the streams of the C events in order. */
export interface StreamFeed extends ViewDocument {
  ids: string[];
}

/** Counts each stream's A and B events: one document a stream, touched again and again. */
export const streamCounts = defineProjection<StreamCount>({
  name: 'counts',
  handles: ['A', 'B'],
  indexes: [],
  documentIds: (event) => [event.streamId],
  evolve: (view, event, id) => ({ _id: id, _pos: event.position, count: (view?.count ?? 0) + 1, last: event.type }),
});

/** Lists the C events' streams in one document, folding the batch itself (`applyBatch`). */
export const streamFeed = defineProjection<StreamFeed>({
  name: 'feed',
  handles: ['C'],
  indexes: [],
  documentIds: () => ['all'],
  evolve: () => null,
  async applyBatch(events, documents) {
    let doc = (await documents.get(['all'])).get('all') ?? { _id: 'all', _pos: '', ids: [] };
    for (const event of events)
      if (event.position > doc._pos) doc = { _id: 'all', _pos: event.position, ids: [...doc.ids, event.streamId] };
    return doc._pos ? [doc] : [];
  },
});
