import fc from 'fast-check';
import { Query } from 'mingo';
import { WORKFLOW_STATES, WorkflowState } from '../domain/deal/deal-terms';
import { effectiveState } from '../domain/deal/deal-workflow';
import { containsText, effectiveStateFilter } from './deal-filters';

describe('deal filters', () => {
  it('select exactly the deals whose effective state is the one asked, at any instant', () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const instant = fc.integer({ min: t0, max: t0 + 10 * 86_400_000 }).map((n) => Math.floor(n / 3_600_000) * 3_600_000);
    fc.assert(
      fc.property(
        fc.constantFrom(...WORKFLOW_STATES),
        instant,
        fc.integer({ min: 1, max: 96 }),
        instant,
        fc.constantFrom(...WORKFLOW_STATES),
        (stored, startAt, hours, now, asked) => {
          const endAt = startAt + hours * 3_600_000;
          const doc = { state: stored, startAt, endAt };
          const expected =
            effectiveState(
              { state: stored, start_at: new Date(startAt).toISOString(), end_at: new Date(endAt).toISOString() },
              new Date(now),
            ) === asked;
          expect(new Query(effectiveStateFilter(asked as WorkflowState, now)).test(doc)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('matches user text literally and case-insensitively', () => {
    const query = new Query({ title: containsText('50% off (Spa)') });
    expect(query.test({ title: 'Get 50% OFF (spa) today' })).toBe(true);
    expect(query.test({ title: 'Get 50 off Spa' })).toBe(false);
  });
});
