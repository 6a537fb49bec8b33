import { compareRuns, comparisonTable, higherIsBetter, median, pairOrder } from '../../bench/support/against';
import { BenchRow, row } from '../../bench/support/bench-row';

const rate = (figure: number, name = 'POST /purchases, one hot deal') => row(name, figure, 'purchases/s', 'bare route', 1000);
const latency = (figure: number, name = 'POST /purchases, one hot deal, p99 latency') => row(name, figure, 'ms', 'bare route p99', 10);
const pair = (A: BenchRow[], B: BenchRow[]) => ({ A, B });

describe('--against: the pure parts', () => {
  it('alternates which side goes first: A B, B A, A B, …', () => {
    expect(pairOrder(4)).toEqual([
      ['A', 'B'],
      ['B', 'A'],
      ['A', 'B'],
      ['B', 'A'],
    ]);
    expect(pairOrder(1)).toEqual([['A', 'B']]);
  });

  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('takes a rate as better higher, a time or a size as better lower, unless the row says', () => {
    expect(higherIsBetter({ unit: 'req/s' })).toBe(true);
    expect(higherIsBetter({ unit: 'ms' })).toBe(false);
    expect(higherIsBetter({ unit: 'MiB' })).toBe(false);
    expect(higherIsBetter({ unit: 'ms', better: 'higher' })).toBe(true);
  });

  it('gives each figure both medians and the median, least and greatest of its per-pair B/A ratios', () => {
    const [figure] = compareRuns([pair([rate(100)], [rate(110)]), pair([rate(200)], [rate(180)]), pair([rate(100)], [rate(120)])]).figures;
    expect(figure).toMatchObject({ aMedian: 100, bMedian: 120, ratios: [1.1, 0.9, 1.2], ratioMedian: 1.1, ratioMin: 0.9, ratioMax: 1.2 });
    expect(figure.verdict).toBe('unclear');
  });

  it('calls a change better or worse only when every pair agrees, in the figure’s direction', () => {
    const faster = compareRuns([
      pair([rate(100), latency(20)], [rate(110), latency(15)]),
      pair([rate(90), latency(30)], [rate(95), latency(25)]),
      pair([rate(80), latency(30)], [rate(81), latency(29)]),
    ]);
    expect(faster.figures.map((f) => [f.name, f.verdict])).toEqual([
      ['POST /purchases, one hot deal', 'better'],
      ['POST /purchases, one hot deal, p99 latency', 'better'],
    ]);
    const slowerOnce = pair([rate(100), latency(20)], [rate(90), latency(25)]);
    expect(compareRuns([slowerOnce, slowerOnce, slowerOnce]).figures.map((f) => f.verdict)).toEqual(['worse', 'worse']);
    expect(compareRuns([slowerOnce, slowerOnce]).figures.map((f) => f.verdict)).toEqual(['too few pairs', 'too few pairs']);
  });

  it('lists the rows only one version produced, and compares a figure over the pairs in which both did', () => {
    const result = compareRuns([pair([rate(100), rate(5, 'old row')], [rate(100), rate(7, 'new row')]), pair([rate(100)], [rate(150)])]);
    expect(result.onlyInA).toEqual(['old row']);
    expect(result.onlyInB).toEqual(['new row']);
    expect(result.figures.map((f) => [f.name, f.ratios])).toEqual([['POST /purchases, one hot deal', [1, 1.5]]]);
    const printed = comparisonTable(result);
    expect(printed).toContain('only in A:\n  old row');
    expect(printed).toContain('only in B:\n  new row');
    expect(printed).toMatch(
      /POST \/purchases, one hot deal\s+higher\s+100 purchases\/s\s+125 purchases\/s\s+1\.250\s+1\.000–1\.500\s+2\s+\(too few pairs to say\)/,
    );
    const three = comparisonTable(
      compareRuns([pair([rate(100)], [rate(90)]), pair([rate(100)], [rate(110)]), pair([rate(100)], [rate(100)])]),
    );
    expect(three).toMatch(/1\.000\s+0\.900–1\.100\s+3\s+no clear change/);
  });

  it('tells apart rows of one run that share a name', () => {
    const result = compareRuns([pair([rate(1, 'x'), rate(2, 'x')], [rate(2, 'x'), rate(2, 'x')])]);
    expect(result.figures.map((f) => [f.name, f.ratioMedian])).toEqual([
      ['x', 2],
      ['x #2', 1],
    ]);
  });
});
