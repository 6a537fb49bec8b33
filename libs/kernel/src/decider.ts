/** A domain event as deciders see it: a type name and plain data (ids, cents, ISO instants). */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

export interface DomainCommand<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/**
 * An aggregate as two pure functions (after Jérémie Chassaing's decider): `decide` turns a command
 * and the current state into new events, `evolve` folds an event into the state. No I/O, no clock
 * (the instant is passed in), no randomness (ids come inside the command).
 */
export interface Decider<S, C extends DomainCommand, E extends DomainEvent> {
  initialState(): S;
  decide(command: C, state: S, now: Date): E[];
  evolve(state: S, event: E): S;
}

export function fold<S, E extends DomainEvent>(decider: Pick<Decider<S, never, E>, 'initialState' | 'evolve'>, events: readonly E[]): S {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
