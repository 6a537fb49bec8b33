import { FairSlots, slowHashes } from './fair-slots';

/** A hash that ends when the test says so, noting when it started. */
function pending(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    hash: async () => {
      log.push(name);
      await done;
      return name;
    },
    finish,
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('FairSlots', () => {
  it("runs at most its slots at once; the slow hashes' two lanes share the thread pool between them", async () => {
    const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    expect(slowHashes.people.slots).toBe(Math.max(1, Math.floor(pool / 2)));
    expect(slowHashes.people.slots + slowHashes.requests.slots).toBe(Math.max(2, pool));
    const hashing = new FairSlots(2);
    const log: string[] = [];
    const hashes = Array.from({ length: 5 }, (_, i) => pending(log, `h${i}`));
    const results = hashes.map((h) => hashing.run('10.0.0.1', h.hash));
    await turn();
    expect(log).toEqual(['h0', 'h1']);
    hashes[0].finish();
    await turn();
    expect(log).toEqual(['h0', 'h1', 'h2']);
    for (const h of hashes) h.finish();
    expect(await Promise.all(results)).toEqual(['h0', 'h1', 'h2', 'h3', 'h4']);
  });

  it("takes waiting hashes in turn by address: one address's queue delays another's by one", async () => {
    const hashing = new FairSlots(1);
    const log: string[] = [];
    const flood = Array.from({ length: 6 }, (_, i) => pending(log, `flood${i}`));
    const floods = flood.map((h) => hashing.run('203.0.113.9', h.hash));
    const member = pending(log, 'member');
    const signIn = hashing.run('198.51.100.7', member.hash);
    for (const h of flood) h.finish();
    member.finish();
    await Promise.all([...floods, signIn]);
    expect(log.indexOf('member')).toBe(2);
  });

  it("takes the same key's work in its turn, and frees the slot of work that fails", async () => {
    const hashing = new FairSlots(1);
    const log: string[] = [];
    const first = pending(log, 'a1');
    const running = hashing.run('net-a', first.hash);
    const same64 = [pending(log, 'a2'), pending(log, 'a3')];
    const waiting = same64.map((h) => hashing.run('net-a', h.hash));
    const other = pending(log, 'b1');
    const otherRun = hashing.run('net-b', other.hash);
    const failing = hashing.run('net-a', () => Promise.reject(new Error('no memory')));
    for (const h of [first, ...same64, other]) h.finish();
    await Promise.all([running, ...waiting, otherRun]);
    await expect(failing).rejects.toThrow('no memory');
    expect(log).toEqual(['a1', 'a2', 'b1', 'a3']);
    // Every slot is free again: a new hash starts at once.
    const next = pending(log, 'c1');
    const nextRun = hashing.run('10.0.0.1', next.hash);
    await turn();
    expect(log.at(-1)).toBe('c1');
    next.finish();
    await nextRun;
  });
});
