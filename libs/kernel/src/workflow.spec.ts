import { runWorkflow, Workflow } from './workflow';

type In = { type: 'Start'; n: number } | { type: 'Done'; id: number };
type Out = { type: 'Work'; id: number } | { type: 'Note'; id: number };
interface S {
  started: number[];
  done: number[];
  seen: string[];
}

/** Starts n pieces of work at once; each one done asks for a note; the state keeps what it saw, in order. */
const toy: Workflow<In, S, Out> = {
  initialState: () => ({ started: [], done: [], seen: [] }),
  decide: (input) =>
    input.type === 'Start'
      ? Array.from({ length: input.n }, (_, i) => ({ type: 'Work' as const, id: i }))
      : [{ type: 'Note', id: input.id }],
  evolve: (state, message) => {
    const seen = [...state.seen, `${message.type}${'id' in message ? message.id : ''}`];
    if (message.type === 'Work') return { ...state, seen, started: [...state.started, message.id] };
    if (message.type === 'Done') return { ...state, seen, done: [...state.done, message.id] };
    return { ...state, seen };
  },
};
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

describe('runWorkflow', () => {
  it('starts the commands one input asks for together, feeds each result as it comes, and ends when nothing is under way', async () => {
    const begun: number[] = [];
    let inFlight = 0;
    let most = 0;
    // Each piece of work ends when the test says so: the last started first, then the others.
    const finish = new Map<number, () => void>();
    const running = runWorkflow(
      toy,
      { type: 'Start', n: 3 },
      async (command) => {
        if (command.type === 'Note') return null;
        begun.push(command.id);
        most = Math.max(most, ++inFlight);
        await new Promise<void>((resolve) => finish.set(command.id, resolve));
        inFlight--;
        return { type: 'Done' as const, id: command.id };
      },
      clock,
    );
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    for (const id of [2, 1, 0]) {
      finish.get(id)!();
      await settle();
    }
    const state = await running;
    expect(most).toBe(3);
    expect(begun).toEqual([0, 1, 2]);
    // The results are folded as they come: each one's input, then the note it asks for.
    expect(state.done).toEqual([2, 1, 0]);
    expect(state.seen).toEqual(['Start', 'Work0', 'Work1', 'Work2', 'Done2', 'Note2', 'Done1', 'Note1', 'Done0', 'Note0']);
  });

  it('gives the first error thrown by a command once every other command has finished', async () => {
    let finished = 0;
    const run = runWorkflow(
      toy,
      { type: 'Start', n: 2 },
      async (command) => {
        if (command.type === 'Note') return null;
        if (command.id === 1) throw new Error('broken');
        await new Promise((resolve) => setTimeout(resolve, 20));
        finished++;
        return { type: 'Done' as const, id: command.id };
      },
      clock,
    );
    await expect(run).rejects.toThrow('broken');
    expect(finished).toBe(1);
  });

  it('passes each command the instant of the input that asked for it', async () => {
    const times = [new Date('2026-01-01T00:00:01Z'), new Date('2026-01-01T00:00:02Z')];
    const seen: string[] = [];
    await runWorkflow(
      toy,
      { type: 'Start', n: 1 },
      async (command, now) => {
        seen.push(`${command.type}@${now.toISOString()}`);
        return command.type === 'Work' ? { type: 'Done' as const, id: command.id } : null;
      },
      { now: () => times.shift()! },
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(seen).toEqual(['Work@2026-01-01T00:00:00.000Z', 'Note@2026-01-01T00:00:01.000Z']);
  });
});
