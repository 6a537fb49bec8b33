import { EventStore, IdempotencyStore, ViewDocument, ViewStore } from '@deals/kernel';
import type { TestApi } from './api-harness';

/** What the service has written: the log's head, every view's documents and the kept Idempotency-Keys' bytes, once the views hold the log. */
export interface WrittenState {
  head: string | null;
  views: Record<string, unknown[]>;
  keptBytes: Array<[string, number]>;
}

/** The service's written state now (see {@link WrittenState}), to compare before and after a call that must write nothing. */
export async function writtenState(api: TestApi): Promise<WrittenState> {
  await api.settle();
  const views = api.get(ViewStore);
  const collections = (await views.status()).map((s) => s.collection).sort();
  const all: Record<string, unknown[]> = {};
  for (const collection of collections) {
    const documents = await views.find<ViewDocument>(collection, {});
    all[collection] = documents.sort((a, b) => (String(a._id) < String(b._id) ? -1 : 1));
  }
  return {
    head: await api.get(EventStore).head(),
    views: all,
    keptBytes: [...api.get(IdempotencyStore).keptBytes()].sort(),
  };
}
