import { ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { MAX_TEST_CLOCKS, TestClockPlacesEvent, testClockPlacesDecider } from './test-clock-places';

const given = deciderSpec(testClockPlacesDecider);
const NOW = new Date('2026-06-15T12:00:00Z');
const taken = (clockId: string): TestClockPlacesEvent => ({ type: 'TestClockPlaceTaken', data: { sandboxId: 'p_test', clockId } });
const freed = (clockId: string): TestClockPlacesEvent => ({ type: 'TestClockPlaceFreed', data: { sandboxId: 'p_test', clockId } });
const take = (clockId: string) => ({ type: 'TakeTestClockPlace' as const, data: { sandboxId: 'p_test', clockId } });
const free = (clockId: string) => ({ type: 'FreeTestClockPlace' as const, data: { sandboxId: 'p_test', clockId } });

describe('test clock places', () => {
  const full = Array.from({ length: MAX_TEST_CLOCKS }, (_, i) => taken(`c${i}`));

  it(`gives a sandbox ${MAX_TEST_CLOCKS} places, a clock one each, and refuses the next until one is freed`, () => {
    given(full.slice(1))
      .when(take('new'), NOW)
      .then([taken('new')]);
    given(full)
      .when(take('new'), NOW)
      .thenThrows(ValidationFailed, {
        message: `frozen_time a sandbox has at most ${MAX_TEST_CLOCKS} test clocks: delete one it no longer needs`,
      });
    given([...full, freed('c3')])
      .when(take('new'), NOW)
      .then([taken('new')]);
  });

  it('takes or frees a place once: again changes nothing', () => {
    given([taken('a')])
      .when(take('a'), NOW)
      .then([]);
    given(full).when(take('c5'), NOW).then([]);
    given([taken('a'), freed('a')])
      .when(free('a'), NOW)
      .then([]);
    given([]).when(free('a'), NOW).then([]);
  });
});
