import { Decider, DomainCommand, DomainEvent, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { Set as ImmutableSet } from 'immutable';

/** A sandbox's test clocks at most (deleting one frees its place). */
export const MAX_TEST_CLOCKS = 100;

export const testClockPlacesStream = (sandboxId: string) => `testclock-places-${sandboxId}`;

export type TestClockPlaceTaken = DomainEvent<'TestClockPlaceTaken', { sandboxId: string; clockId: string }>;
export type TestClockPlaceFreed = DomainEvent<'TestClockPlaceFreed', { sandboxId: string; clockId: string }>;
export type TestClockPlacesEvent = TestClockPlaceTaken | TestClockPlaceFreed;

export type TakeTestClockPlace = DomainCommand<'TakeTestClockPlace', { sandboxId: string; clockId: string }>;
export type FreeTestClockPlace = DomainCommand<'FreeTestClockPlace', { sandboxId: string; clockId: string }>;
export type TestClockPlacesCommand = TakeTestClockPlace | FreeTestClockPlace;

/**
 * How many test clocks a sandbox has, decided on a stream of its own: a clock is made only once it
 * holds a place here, so two made at once never both take the last place (the append's expected
 * revision). Deleting a clock frees its place; taking or freeing one twice changes nothing.
 */
export const testClockPlacesDecider: Decider<ImmutableSet<string>, TestClockPlacesCommand, TestClockPlacesEvent> = {
  initialState: () => ImmutableSet(),
  decide(command, held) {
    switch (command.type) {
      case 'TakeTestClockPlace':
        if (held.has(command.data.clockId)) return [];
        if (held.size >= MAX_TEST_CLOCKS)
          throw new ValidationFailed([
            {
              type: 'invalid',
              resource: 'test_clock',
              field: 'frozen_time',
              message: `a sandbox has at most ${MAX_TEST_CLOCKS} test clocks: delete one it no longer needs`,
            },
          ]);
        return [{ type: 'TestClockPlaceTaken', data: command.data }];
      case 'FreeTestClockPlace':
        return held.has(command.data.clockId) ? [{ type: 'TestClockPlaceFreed', data: command.data }] : [];
      default:
        return unknownCommand(command);
    }
  },
  evolve(held, event) {
    switch (event.type) {
      case 'TestClockPlaceTaken':
        return held.add(event.data.clockId);
      case 'TestClockPlaceFreed':
        return held.delete(event.data.clockId);
      default:
        return ignoredEvent(event, held);
    }
  },
};
