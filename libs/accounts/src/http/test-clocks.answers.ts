import { z } from 'zod';
import type { TestClockView } from '../projections/test-clocks/test-clocks.projection';

export const testClockSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    frozen_time: z.string().meta({ description: 'the instant the clock stands at (while advancing: as far as it got)' }),
    status: z.enum(['ready', 'advancing']).meta({ description: 'advancing until every consequence of an advance ran; then ready' }),
    advancing_to: z.string().nullable().meta({ description: 'while advancing: where it moves to; else null' }),
    created_at: z.string().meta({ description: 'when it was made, in real time' }),
    deleted: z.boolean().meta({ description: 'true in the answer to its deletion; no call acts under it again' }),
    livemode: z.literal(false),
  })
  .meta({ id: 'TestClock', description: "a sandbox's test clock: the time of the calls made under it (`Deals-Test-Clock`)" });

const example = {
  id: 'clock_P7P72Z9DDJ3Ix1zDc4n',
  name: 'renewal tests',
  frozen_time: '2026-06-15T12:00:00.000Z',
  status: 'ready',
  advancing_to: null,
  created_at: '2026-06-15T12:00:00.000Z',
  deleted: false,
  livemode: false,
};

export const TestClockAnswer = z
  .object({ status: z.literal('success'), test_clock: testClockSchema })
  .meta({ example: { status: 'success', test_clock: example } });

export const TestClockListAnswer = z
  .object({ status: z.literal('success'), test_clocks: z.array(testClockSchema) })
  .meta({ example: { status: 'success', test_clocks: [example] } });

export const toTestClock = (view: TestClockView) => ({
  id: view._id,
  name: view.name,
  frozen_time: view.frozenTime,
  status: view.status,
  advancing_to: view.advancingTo,
  created_at: view.createdAt,
  deleted: view.deletedAt !== null,
  livemode: false as const,
});
