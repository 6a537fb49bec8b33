import { MemoryEventStore } from '@deals/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendHolding, appendToStream, isAtomicAcrossStreams } from '../ports/event-store.capabilities';
import { PersonalKeyStore } from '../ports/personal-key-store.port';
import { PersonalDataEventStore } from './personal-data-event-store';
import { PersonalFields } from './personal-fields';

const fields: PersonalFields = new Map([['UserRegistered', { owner: (data) => data.userId as string, paths: [['email']] }]]);

/** Keys in memory; while `held`, each read waits until `release()`. */
class HeldKeys extends PersonalKeyStore {
  readonly keys = new Map<string, Buffer>();
  readonly erased = new Set<string>();
  readonly asked: string[] = [];
  held = false;
  private waiting: Array<() => void> = [];

  async keyFor(userId: string): Promise<Buffer | null> {
    if (this.erased.has(userId)) return null;
    if (!this.keys.has(userId)) this.keys.set(userId, randomBytes(32));
    return this.keys.get(userId)!;
  }
  async keyOf(userId: string): Promise<{ key: Buffer | null; erased: boolean }> {
    this.asked.push(userId);
    const answer = { key: this.keys.get(userId) ?? null, erased: this.erased.has(userId) };
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return answer;
  }
  release(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
  async keptOf(userIds: readonly string[]): Promise<string[]> {
    return userIds.filter((id) => this.keys.has(id));
  }
  async erase(userId: string): Promise<void> {
    this.erased.add(userId);
    this.keys.delete(userId);
  }
  async close(): Promise<void> {}
}

async function logWith(users: string[]) {
  const keys = new HeldKeys();
  const writer = new PersonalDataEventStore(new MemoryEventStore(), keys, fields, new Map());
  for (const userId of users)
    await appendToStream(
      writer,
      `user-${userId}`,
      [{ id: randomUUID(), type: 'UserRegistered', data: { userId, email: `${userId}@example.com` }, metadata: { occurredAt: '' } }],
      'no_stream',
    );
  // A reader of the same log that has read no key yet, as another process.
  const reader = new PersonalDataEventStore(writer.inner, keys, fields, new Map());
  return { keys, reader };
}

const emails = (events: Array<{ data: unknown }>) => events.map((e) => (e.data as { email: string | null }).email);

describe('the log with personal data encrypted', () => {
  it('seals the personal values of every append to several streams, and tells whether its log makes them one transaction', async () => {
    const keys = new HeldKeys();
    const inner = new MemoryEventStore();
    const log = new PersonalDataEventStore(inner, keys, fields, new Map());
    const registered = (userId: string) => ({
      id: randomUUID(),
      type: 'UserRegistered',
      data: { userId, email: `${userId}@example.com` },
      metadata: { occurredAt: '' },
    });
    await log.appendToStreams([
      { streamId: 'user-a', events: [registered('a')], expected: 'no_stream' },
      {
        streamId: 'other',
        events: [{ id: randomUUID(), type: 'Other', data: { email: 'plain' }, metadata: { occurredAt: '' } }],
        expected: 'any',
      },
      { streamId: 'user-b', events: [registered('b')], expected: 'no_stream' },
    ]);
    const stored = await inner.readAll({ after: null, maxCount: 10 });
    expect(stored.map((e) => (e.data as { email: unknown }).email)).toEqual([
      expect.not.stringContaining('@'),
      'plain',
      expect.not.stringContaining('@'),
    ]);
    expect(emails(await log.readAll({ after: null, maxCount: 10 }))).toEqual(['a@example.com', 'plain', 'b@example.com']);
    expect(isAtomicAcrossStreams(log)).toBe(isAtomicAcrossStreams(inner));
  });

  it("seals the personal values of a holding append's decision, and holds the stream where its log does", async () => {
    const inner = new MemoryEventStore();
    const log = new PersonalDataEventStore(inner, new HeldKeys(), fields, new Map());
    const holding = jest.spyOn(inner, 'appendHolding');
    const registered = {
      id: randomUUID(),
      type: 'UserRegistered',
      data: { userId: 'h', email: 'h@example.com' },
      metadata: { occurredAt: '' },
    };
    await appendHolding(log, 'user-h', async () => [{ streamId: 'user-h', events: [registered], expected: 'no_stream' }]);
    expect(holding).toHaveBeenCalledWith('user-h', expect.any(Function));
    expect(emails(await inner.readStream('user-h'))).toEqual([expect.not.stringContaining('@')]);
    expect(emails(await log.readStream('user-h'))).toEqual(['h@example.com']);
  });

  it('reads no key to write an event of a personal type that holds no personal value, even of an erased owner', async () => {
    const keys = new HeldKeys();
    const inner = new MemoryEventStore();
    const log = new PersonalDataEventStore(inner, keys, fields, new Map());
    keys.erased.add('gone');
    const asked = jest.spyOn(keys, 'keyFor');
    const bare = { id: randomUUID(), type: 'UserRegistered', data: { userId: 'gone', email: null }, metadata: { occurredAt: '' } };
    await appendToStream(log, 'user-gone', [bare], 'no_stream');
    expect(asked).not.toHaveBeenCalled();
    expect((await inner.readStream('user-gone'))[0].data).toEqual({ userId: 'gone', email: null });
    // With a value, the erased owner's write is refused, as ever.
    const withEmail = { ...bare, id: randomUUID(), data: { userId: 'gone', email: 'gone@example.com' } };
    await expect(appendToStream(log, 'user-gone', [withEmail], 0)).rejects.toThrow('their personal data was erased');
    expect(asked).toHaveBeenCalledWith('gone');
  });

  it("asks for every owner's key of a page at once, each owner once", async () => {
    const { keys, reader } = await logWith(['a', 'b', 'c']);
    keys.held = true;
    const reading = reader.readAll({ after: null, maxCount: 100 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(keys.asked.sort()).toEqual(['a', 'b', 'c']);
    keys.release();
    expect(emails(await reading)).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
  });

  it('keeps an erasure heard while a key was being read: the key read before it is not used again', async () => {
    const { keys, reader } = await logWith(['a']);
    keys.held = true;
    const reading = reader.readAll({ after: null, maxCount: 100 });
    await new Promise((resolve) => setImmediate(resolve));
    await reader.erase('a', new Date());
    keys.release();
    expect(emails(await reading)).toEqual([null]);
    keys.held = false;
    expect(emails(await reader.readAll({ after: null, maxCount: 100 }))).toEqual([null]);
  });

  it('seals and opens many megabytes with turns of the event loop between them, so other requests are answered meanwhile', async () => {
    const keys = new HeldKeys();
    const inner = new MemoryEventStore();
    const store = new PersonalDataEventStore(inner, keys, fields, new Map());
    const turns: string[] = [];
    const appendToStreams = inner.appendToStreams.bind(inner);
    jest.spyOn(inner, 'appendToStreams').mockImplementation((appends) => {
      turns.push('written');
      return appendToStreams(appends);
    });
    const big = 'x'.repeat(300 * 1024);
    const events = Array.from({ length: 8 }, (_, i) => ({
      id: randomUUID(),
      type: 'UserRegistered',
      data: { userId: 'u1', email: `${i}${big}` },
      metadata: { occurredAt: '' },
    }));
    setImmediate(() => turns.push('a turn of the loop'));
    await store.appendToStreams([{ streamId: 'user-u1', events, expected: 'no_stream' }]);
    expect(turns).toEqual(['a turn of the loop', 'written']);
    const reading = store.readStream('user-u1');
    let turned = false;
    setImmediate(() => (turned = true));
    await Promise.resolve();
    expect(turned).toBe(false);
    expect(emails(await reading)).toEqual(events.map((e) => e.data.email));
    expect(turned).toBe(true);
  });
});
