/**
 * A process that spans several streams and outside services, as two pure functions (after Emmett's
 * workflows and Oskar Dudycz's samples): `decide` turns what happened (an input) and the state into
 * the commands to carry out next; `evolve` folds inputs and the commands decided into the state.
 * No I/O, no clock (the instant is passed in), no randomness (ids come inside the inputs).
 *
 * The runner folds an input first and `decide` sees the state with it (every decision here rests on
 * what the input just told); then it folds each command decided, so that the state knows what it
 * asked for and is still waiting on.
 */
export interface Workflow<I, S, O> {
  initialState(): S;
  decide(input: I, state: S, now: Date): O[];
  evolve(state: S, message: I | O): S;
}

/**
 * Carries a workflow out in this process: feeds `first`, carries out each command decided (all the
 * commands one input decides at once, started in the same turn of the loop, so that appends to the
 * log can share a commit), and feeds each one's result back as the next input, until no command is
 * under way. `perform` turns a command into the input it leads to (a refusal or failure included: it
 * should not throw), or null when nothing follows from it. Returns the final state, from which the
 * caller reads the outcome.
 *
 * Inputs are fed one at a time, in the order their commands finish. A `perform` that throws stops
 * the run: the error is given once every command under way has finished.
 */
export function runWorkflow<I, S, O>(
  workflow: Workflow<I, S, O>,
  first: I,
  perform: (command: O, now: Date) => Promise<I | null>,
  clock: { now(): Date },
  startedAt: Date = clock.now(),
): Promise<S> {
  return new Promise((resolve, reject) => {
    let state = workflow.initialState();
    let underWay = 0;
    let failure: { error: unknown } | null = null;
    const settle = () => {
      if (underWay > 0) return;
      if (failure) reject(failure.error);
      else resolve(state);
    };
    const feed = (input: I, now: Date) => {
      let commands: O[];
      try {
        state = workflow.evolve(state, input);
        commands = workflow.decide(input, state, now);
        for (const command of commands) state = workflow.evolve(state, command);
      } catch (error) {
        failure ??= { error };
        return;
      }
      underWay += commands.length;
      for (const command of commands) {
        perform(command, now).then(
          (next) => {
            underWay--;
            if (next !== null && !failure) feed(next, clock.now());
            settle();
          },
          (error: unknown) => {
            underWay--;
            failure ??= { error };
            settle();
          },
        );
      }
    };
    feed(first, startedAt);
    settle();
  });
}
