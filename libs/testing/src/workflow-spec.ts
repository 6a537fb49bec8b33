import { Workflow } from '@deals/kernel';

/**
 * Given the inputs a workflow was fed, when one more at an instant, then the commands it asks for
 * and the state they leave (after Emmett's workflow specifications). The history is replayed as
 * `runWorkflow` feeds it: each input folded, decided on, then its commands folded.
 */
export function workflowSpec<I, S, O>(workflow: Workflow<I, S, O>, now: Date = new Date('2026-01-01T00:00:00Z')) {
  const feed = (state: S, input: I, at: Date): { state: S; commands: O[] } => {
    let next = workflow.evolve(state, input);
    const commands = workflow.decide(input, next, at);
    for (const command of commands) next = workflow.evolve(next, command);
    return { state: next, commands };
  };
  return (...history: I[]) => {
    let state = workflow.initialState();
    for (const input of history) state = feed(state, input, now).state;
    return {
      when: (input: I, at: Date = now) => {
        const fed = feed(state, input, at);
        return {
          /** The commands asked for, in full. */
          then: (expected: O[]) => {
            expect(fed.commands).toEqual(expected);
            return fed.state;
          },
          /** The commands asked for, by type (order kept). */
          thenAsks: (...types: string[]) => {
            expect(fed.commands.map((c) => (c as { type: string }).type)).toEqual(types);
            return fed;
          },
        };
      },
    };
  };
}
