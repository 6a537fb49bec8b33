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
 * A command no case of `decide` takes: the compiler proves there is none (`never`: the command of a
 * switch over a union of them, or the type of a lone one).
 */
export function unknownCommand(command: never): never {
  const type = typeof command === 'object' ? (command as DomainCommand).type : command;
  throw new TypeError(`no decider takes a command of type ${String(type)}`);
}

/** An event no case of `evolve` takes (the compiler proves there is none: `never`): the state as it is. */
export const ignoredEvent = <S>(_event: never, state: S): S => state;

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

/**
 * How a decider's state is kept as a snapshot of its stream (a long stream's, whose fold from the
 * first event would take long). `toJson`/`fromJson` must round-trip every state `evolve` can make;
 * the property tests of a codec fold random histories both ways and compare.
 *
 * A state may keep part of itself as entries by key that are not in the snapshot's body (`keyed`):
 * a part that grows with the history but of which a command reads a few named entries (the holds a
 * deal ever closed). The entries are saved with each snapshot, and those a command names are looked
 * up before it is decided; in between, the state holds only what was added since its last snapshot.
 */
export interface SnapshotCodec<S> {
  /** The state's shape: a snapshot of another shape is ignored. A new one whenever the state's form or meaning changes. */
  readonly shape: string;
  /** Events a stream grows by between two snapshots. */
  readonly every: number;
  /** The state without its keyed entries, as JSON. */
  toJson(state: S): unknown;
  fromJson(json: unknown): S;
  readonly keyed?: KeyedEntries<S>;
}

/** The part of a state kept as entries by key (see {@link SnapshotCodec}). */
export interface KeyedEntries<S> {
  /** The keys whose entries deciding `command` reads. */
  keysOf(command: DomainCommand): readonly string[];
  /** Whether the state holds the entry of `key` (or knows it has none: entries are only ever added). */
  has(state: S, key: string): boolean;
  /** The entries the state holds, as JSON values. */
  entries(state: S): Array<readonly [string, unknown]>;
  /** The state with these entries (looked up) added. */
  withEntries(state: S, entries: ReadonlyArray<readonly [string, unknown]>): S;
  /** The state holding none of its entries (they are saved). */
  withoutEntries(state: S): S;
}

/** A decider whose long streams are snapshotted. */
export interface SnapshottedDecider<S, C extends DomainCommand, E extends DomainEvent> extends Decider<S, C, E> {
  readonly snapshot?: SnapshotCodec<S>;
}

export function fold<S, E extends DomainEvent>(decider: Pick<Decider<S, never, E>, 'initialState' | 'evolve'>, events: readonly E[]): S {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
