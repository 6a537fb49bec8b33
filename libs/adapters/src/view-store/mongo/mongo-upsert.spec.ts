import { MongoBulkWriteError } from 'mongodb';
import { MongoViewStore } from './mongo-view-store.adapter';

/**
 * How the store reads duplicate-key refusals of its writes, which a server gives on a race or another
 * unique index, not on demand (the contract suite runs the rest on a real server): the collection is
 * replaced by one that answers as the driver does, a `MongoBulkWriteError` whose write errors carry
 * code 11000.
 */
describe('MongoViewStore: duplicate keys on its writes', () => {
  const duplicate = (indexes: number[]) =>
    Object.assign(Object.create(MongoBulkWriteError.prototype) as MongoBulkWriteError, {
      writeErrors: indexes.map((index) => ({ code: 11000, index })),
      result: { getWriteConcernError: () => undefined },
    });
  /**
   * A collection whose every insert is refused as a duplicate, whose pairs of the second step match
   * `matched` documents, and that holds `stored`.
   */
  const refusing = (matched: number, stored: Array<{ _id: string; _pos: string }>) => ({
    insertMany: jest.fn(async (docs: unknown[]) => {
      throw duplicate(docs.map((_, i) => i));
    }),
    bulkWrite: jest.fn(async () => ({ matchedCount: matched })),
    find: jest.fn(() => ({ toArray: async () => stored })),
  });
  const upsertNewer = (target: unknown, documents: Array<{ _id: string; _pos: string }>) =>
    (
      new MongoViewStore('mongodb://localhost:1', 'unused') as unknown as { upsertNewer(t: unknown, d: unknown[]): Promise<void> }
    ).upsertNewer(target, documents);

  it('takes a refusal as done where each document was found as new or replaced an older one', async () => {
    const target = refusing(1, []);
    await expect(upsertNewer(target, [{ _id: 'a', _pos: '00000000000000000005' }])).resolves.toBeUndefined();
    expect(target.bulkWrite).toHaveBeenCalledTimes(1);
    expect(target.find).not.toHaveBeenCalled();
  });

  it('takes a document matched by neither as done where it is stored as new (another writer moved it meanwhile)', async () => {
    const target = refusing(0, [{ _id: 'a', _pos: '00000000000000000009' }]);
    await expect(upsertNewer(target, [{ _id: 'a', _pos: '00000000000000000005' }])).resolves.toBeUndefined();
  });

  it('fails where the document was not stored: another unique index refused it, and it must not be dropped in silence', async () => {
    const target = refusing(0, []);
    await expect(upsertNewer(target, [{ _id: 'partner-2', _pos: '00000000000000000005' }])).rejects.toBeInstanceOf(MongoBulkWriteError);
  });
});

describe('MongoViewStore: queries', () => {
  it('refuses a condition that is undefined, which the client would leave out of the query (matching more, not less)', async () => {
    const store = new MongoViewStore('mongodb://localhost:1', 'unused');
    const unreachable = { findOne: jest.fn(), find: jest.fn(), countDocuments: jest.fn() };
    (store as unknown as { live: () => unknown }).live = () => unreachable;
    await expect(store.find('purchase_details_v3', { userId: undefined, partnerId: 'p' })).rejects.toThrow(/userId is undefined/);
    await expect(store.count('purchase_details_v3', { $or: [{ userId: 'u' }, { userId: { $in: [undefined] } }] })).rejects.toThrow(
      /undefined/,
    );
    expect(unreachable.find).not.toHaveBeenCalled();
    expect(unreachable.countDocuments).not.toHaveBeenCalled();
  });
});
