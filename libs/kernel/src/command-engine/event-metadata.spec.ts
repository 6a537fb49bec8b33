import type { CommandContext } from './command';
import { RequestWrites } from '../read-your-writes';
import { metadataFrom, metadataOf, RECENT_CONTEXTS } from './event-metadata';

const t0 = new Date(Date.UTC(2026, 0, 1));
const t1 = new Date(Date.UTC(2026, 0, 2));
const context = (now = t0, metadata: CommandContext['metadata'] = { actor: 'partner:p1', requestId: 'r-1' }): CommandContext => ({
  now,
  metadata,
});

describe("the events' metadata of a command context", () => {
  it("holds the caller's metadata fields and the time, and nothing else the caller carries", () => {
    const caller = { partnerId: 'p1', actor: 'partner:p1', requestId: 'r-1', writes: new RequestWrites(), password: 'secret' };
    expect(metadataFrom(context(t0, caller))).toEqual({
      occurredAt: '2026-01-01T00:00:00.000Z',
      partnerId: 'p1',
      actor: 'partner:p1',
      requestId: 'r-1',
    });
    expect(Object.keys(metadataFrom(context(t0, { actor: 'operator' })))).toEqual(['occurredAt', 'actor']);
  });

  it('is one object for the commands given the same context', () => {
    const given = context();
    const first = metadataOf(given);
    expect(metadataOf(given)).toBe(first);
    expect(metadataOf(given)).toBe(first);
  });

  it('is a new object for another context, even an equal one', () => {
    const given = context();
    const other = { ...given };
    expect(metadataOf(other)).not.toBe(metadataOf(given));
    expect(metadataOf(other)).toEqual(metadataOf(given));
  });

  it("is a new object once the context's time or caller object is replaced", () => {
    const given = context();
    const first = metadataOf(given);
    given.now = t1;
    const later = metadataOf(given);
    expect(later).not.toBe(first);
    expect(later.occurredAt).toBe('2026-01-02T00:00:00.000Z');
    // The same instant in a new Date is the same time.
    given.now = new Date(t1.getTime());
    expect(metadataOf(given)).toBe(later);
    given.metadata = { actor: 'partner:p1', requestId: 'r-2' };
    const recalled = metadataOf(given);
    expect(recalled).not.toBe(later);
    expect(recalled.requestId).toBe('r-2');
  });

  it('remembers a bounded number of contexts: one among the recent ones keeps its object, an old one gets a new one', () => {
    const old = context();
    const first = metadataOf(old);
    // However many contexts were seen before, this many new ones cannot all be held with the old one.
    for (let i = 0; i < RECENT_CONTEXTS; i++) metadataOf(context());
    const recent = context();
    const made = metadataOf(recent);
    expect(metadataOf(recent)).toBe(made);
    const again = metadataOf(old);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
