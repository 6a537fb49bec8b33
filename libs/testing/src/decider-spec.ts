import { Decider, DomainCommand, DomainEvent, fold } from '@deals/kernel';

/** Given events, when a command at an instant, then events or an error (after Emmett's DeciderSpecification). */
export function deciderSpec<S, C extends DomainCommand, E extends DomainEvent>(decider: Decider<S, C, E>) {
  return (history: E[]) => ({
    when: (command: C, now: Date = new Date('2026-01-01T00:00:00Z')) => {
      const run = () => decider.decide(command, fold(decider, history), now);
      return {
        then: (expected: E[]) => expect(run()).toEqual(expected),
        thenThrows: (errorClass: new (...args: never[]) => Error, match?: Record<string, unknown>) => {
          let thrown: unknown;
          try {
            run();
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(errorClass);
          if (match) expect(thrown).toMatchObject(match);
        },
      };
    },
  });
}
