/**
 * Refunds per second of the real API (`POST /purchases/:purchase_id/refunds`), against stored-card
 * purchases per second on the same hot deal in the same process.
 *
 * Setup: the purchases bench's (`startPurchasesApi`: the whole API on a fresh data directory, one
 * partner, the demo regions and deals, 500 users with a stored card approved by the simulated
 * processor), not measured.
 *
 * Measures, with 50 connections (autocannon in a forked child, HTTPS, pipelining 1):
 * - purchases/s on the hot deal (`measure`: a warm-up run, then the measured one);
 * - then refunds/s of the purchases those two runs made, each refunded once, whole (body
 *   `{reason: requested_by_customer}`; the simulated processor pays back at once): the first fifth
 *   of them as a warm-up, the rest measured, every request answered before the run ends.
 * A refund decides on the purchase's stream and each coupon's, asks the processor (one write of its
 * vault) and records the outcome: about as many commits one after the other as a purchase.
 *
 * Checks after the runs: every refund answered 201 `succeeded`, and the refunds view holds as many
 * succeeded refunds as were answered.
 */
import { PURCHASE_DETAILS, REFUND_DETAILS } from '@deals/purchasing';
import { ViewDocument, ViewStore } from '@deals/kernel';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { LoadRun, runLoad, summarize } from './support/load';
import { withTempDir } from './support/temp-dir';
import { CONNECTIONS, measure, settle, startPurchasesApi } from './purchases.bench';

/** The share of the purchases refunded as a warm-up before the measured refunds. */
const WARM_SHARE = 0.2;

export async function refundsBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('refunds', async (dataDir) => {
    const session = await startPurchasesApi(dataDir);
    try {
      const purchases = await measure(session, options, 'hot');
      const views = session.api.app.get(ViewStore);
      const bought = await views.find<ViewDocument & { paymentState: string }>(PURCHASE_DETAILS, { 'deal.dealId': session.hot.id });
      const ids = bought.filter((p) => p.paymentState === 'charged').map((p) => p._id);
      const warmCount = Math.max(CONNECTIONS, Math.floor(ids.length * WARM_SHARE));
      const refund = (list: string[]) =>
        runLoad({
          origin: session.origin,
          paths: [`/purchases/${list[0]}/refunds?api_key=${session.apiKey}`],
          connections: CONNECTIONS,
          ca: session.ca,
          durationSec: 0,
          amount: list.length,
          post: {
            template: '{"reason":"requested_by_customer"}',
            paths: list.map((id) => `/purchases/${encodeURIComponent(id)}/refunds?api_key=${session.apiKey}`),
            expectField: 'status',
          },
        });
      const warm = await refund(ids.slice(0, warmCount));
      await settle(session);
      const run: LoadRun = await refund(ids.slice(warmCount));
      await settle(session);
      const succeeded = await views.count(REFUND_DETAILS, { state: 'succeeded' });
      const answered = warm.ok + run.ok;
      const checked = warm.non2xx + run.non2xx === 0 && succeeded === answered;
      const refunds = summarize([run]);
      const bought201 = purchases.summary;
      return [
        row(
          `POST /purchases/:id/refunds, one hot deal, refunds/s${checked ? '' : ' (REFUSALS OR A VIEW THAT DISAGREES?)'}`,
          refunds.okPerSec,
          'refunds/s',
          'POST /purchases on the same deal, purchases/s',
          bought201.okPerSec,
          {
            limitUnit: 'purchases/s',
            notes: [
              `${CONNECTIONS} connections, pipelining 1, over HTTPS; the purchases: ${options.httpWarmupSec} s warm-up then ${options.httpDurationSec} s measured on the hot deal ` +
                `(${bought201.okPerSec.toFixed(0)}/s, p99 ${bought201.p99Ms.toFixed(1)} ms); the ${ids.length} purchases they made each refunded once, whole: ` +
                `${warm.total} as a warm-up, then ${run.total} measured in ${run.durationSec.toFixed(1)} s (statuses ${JSON.stringify(run.statuses)}, errors ${run.errors}); ` +
                `refund p99 ${refunds.p99Ms.toFixed(1)} ms; the refunds view holds ${succeeded} succeeded of ${answered} answered`,
              session.setupNote,
            ],
          },
        ),
      ];
    } finally {
      await session.api.close();
    }
  });
}
