import { LogPosition } from './ports/event-store.port';
import { ViewDocument, ViewWriter } from './ports/view-store.port';
import { RememberingWriter } from './remembering-writer';

interface Doc extends ViewDocument {
  n: number;
}

/** A writer over a map, counting the ids it is asked for. */
function storeWriter(): ViewWriter & { asked: string[]; docs: Map<string, Doc>; failNext: boolean } {
  const docs = new Map<string, Doc>();
  return {
    collection: 'c',
    generation: '1',
    asked: [],
    docs,
    failNext: false,
    async getMany<T extends ViewDocument>(ids: string[]) {
      this.asked.push(...ids);
      const found = new Map<string, T>();
      for (const id of ids) if (docs.has(id)) found.set(id, docs.get(id) as unknown as T);
      return found;
    },
    async commit<T extends ViewDocument>(documents: readonly T[]) {
      if (this.failNext) {
        this.failNext = false;
        throw new Error('the store went away');
      }
      for (const doc of documents) docs.set(doc._id, doc as unknown as Doc);
    },
    async checkpoint() {
      return null;
    },
  };
}

const at = (n: number): LogPosition => String(n).padStart(20, '0');

describe('RememberingWriter', () => {
  it('reads each id from the store once, an absent one too, and serves what it committed without reading', async () => {
    const inner = storeWriter();
    inner.docs.set('a', { _id: 'a', _pos: at(1), n: 1 });
    const writer = new RememberingWriter(inner);
    expect([...(await writer.getMany<Doc>(['a', 'b'])).keys()]).toEqual(['a']);
    expect([...(await writer.getMany<Doc>(['a', 'b'])).keys()]).toEqual(['a']);
    expect(inner.asked).toEqual(['a', 'b']);
    await writer.commit<Doc>([{ _id: 'b', _pos: at(2), n: 2 }], at(2));
    expect((await writer.getMany<Doc>(['b'])).get('b')?.n).toBe(2);
    writer.remember([{ _id: 'c', _pos: at(3), n: 3 } as Doc]);
    expect((await writer.getMany<Doc>(['c'])).get('c')?.n).toBe(3);
    expect(inner.asked).toEqual(['a', 'b']);
    expect([writer.collection, writer.generation]).toEqual(['c', '1']);
  });

  it('forgets everything when a commit fails, and reads the store again', async () => {
    const inner = storeWriter();
    const writer = new RememberingWriter(inner);
    await writer.commit<Doc>([{ _id: 'a', _pos: at(1), n: 1 }], at(1));
    inner.failNext = true;
    await expect(writer.commit<Doc>([{ _id: 'a', _pos: at(2), n: 2 }], at(2))).rejects.toThrow('went away');
    expect((await writer.getMany<Doc>(['a'])).get('a')?.n).toBe(1);
    expect(inner.asked).toEqual(['a']);
  });

  it('keeps about as many documents as it is given room for, reading the others again', async () => {
    const inner = storeWriter();
    const writer = new RememberingWriter(inner, 4);
    for (let n = 0; n < 10; n++) await writer.commit<Doc>([{ _id: `d${n}`, _pos: at(n), n }], at(n));
    await writer.getMany(['d0', 'd9']);
    expect(inner.asked).toEqual(['d0']);
  });
});
