/**
 * Emails of one 10,000-recipient targeted-email batch delivered per second, against bare
 * nodemailer sends of the same messages to the same SMTP sink in the same run.
 *
 * Setup: the whole API (`startApi`) on a fresh data directory without demo data, with `SMTP_URL`
 * pointing at a local SMTP sink (the `smtp-server` package in this process: it accepts every message
 * and keeps only a count); one partner, the demo regions and one daily deal of the first active
 * region; {@link RECIPIENTS} users made with `POST /users` (50 at a time, not measured). The batch
 * is scheduled on the partner's day stream as the API schedules it, but due now (the API only takes
 * a `send_at` tomorrow, and the clock here is the real one); its delivery is then run as its job
 * runs it (`BatchDelivery.deliver`), and timed from start to its `BatchDelivered` event: each
 * recipient's user read, message rendered and sent over the pooled SMTP transport (5 connections,
 * 10 in flight), and its outcome appended to the batch's stream.
 *
 * Against: the same {@link RECIPIENTS} messages (the same renderer, the same addresses), sent with
 * a bare nodemailer pooled transport with the same settings (5 connections, 10 in flight) to the
 * same sink, right after; nothing recorded. Aim: at least {@link AIM} of the bare rate.
 */
import { CreatePartner } from '@deals/accounts';
import { CatalogueImport, DealImportRecord, ProjectionHost } from '@deals/runtime';
import { demoRegions } from '@deals/runtime/demo/demo-catalogue';
import { EventStore, handleCommand, OPERATOR } from '@deals/kernel';
import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import { BatchDelivery } from '@deals/messaging';
import { batchDayDecider } from '@deals/messaging/domain/batch/batch-day.decider';
import { batchDayStream } from '@deals/messaging/domain/batch/batch.events';
import { dealEmail } from '@deals/messaging/email/deal-email';
import { DealSummaries } from '@deals/messaging/email/deal-summaries';
import { CommandBus } from '@nestjs/cqrs';
import { Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { startBenchApi } from './support/bench-api';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { httpsPostJson } from './support/https-get';
import { withTempDir } from './support/temp-dir';

const RECIPIENTS = 10_000;
const AIM = 0.5;
const DAY_MS = 86_400_000;

/** An SMTP server that accepts everything and counts the messages. */
async function startSink(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let messages = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('end', () => {
        messages += 1;
        callback();
      });
      stream.resume();
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    count: () => messages,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function batchEmailBench(options: BenchOptions): Promise<BenchRow[]> {
  const recipients = options.quick ? RECIPIENTS / 5 : RECIPIENTS;
  const sink = await startSink();
  try {
    return await withTempDir('batch-email', async (dataDir) => {
      const { api, tls, origin } = await startBenchApi(dataDir, 'off', { SMTP_URL: sink.url });
      try {
        const app = api.app;
        const partner = await app.get(CommandBus).execute(new CreatePartner('Batch email bench partner', 'partner', OPERATOR));
        const regions = demoRegions();
        await app.get(CatalogueImport).regions(regions, OPERATOR);
        const now = Date.now();
        const deal: DealImportRecord = {
          id: 'bench-email-deal',
          title: 'Spa day for two',
          type: 'daily-deal',
          state: 'in-flight',
          current_price: 4900,
          value: 12000,
          fine_print: 'Limit 2 per person.',
          start_at: new Date(now - DAY_MS).toISOString(),
          end_at: new Date(now + 7 * DAY_MS).toISOString(),
          fulfillment_method: 'printed',
          region_id: regions.find((r) => r.active)!.id,
          quantity: 1000,
        };
        await app.get(CatalogueImport).deals([deal], OPERATOR);
        const apiKey = encodeURIComponent(partner.apiKey);
        const agent = new Agent({ keepAlive: true, maxSockets: 50 });
        const users: string[] = new Array(recipients);
        let next = 0;
        const tag = Date.now().toString(36);
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            for (let i = next++; i < recipients; i = next++) {
              const answer = await httpsPostJson(
                `${origin}/users?api_key=${apiKey}`,
                tls.cert,
                { email: `r${i}-${tag}@bench.test` },
                {},
                agent,
              );
              users[i] = (JSON.parse(answer.body.toString('utf8')) as { user_id: string }).user_id;
            }
          }),
        );
        agent.destroy();
        await app.get(ProjectionHost).waitForAll();

        // The batch, due now, scheduled on the partner's day stream as the API would.
        const sendAt = new Date();
        const sendDay = sendAt.toISOString().slice(0, 10);
        await handleCommand(
          app.get(EventStore),
          batchDayStream(partner.partnerId, sendDay),
          batchDayDecider,
          {
            type: 'ScheduleBatch',
            data: {
              batchId: 'bench-batch',
              partnerId: partner.partnerId,
              dealId: deal.id,
              userIds: users,
              mode: 'augment',
              sendAt: sendAt.toISOString(),
              sendDay,
            },
          },
          { now: sendAt, metadata: { ...OPERATOR, partnerId: partner.partnerId } },
        );
        const before = sink.count();
        const t0 = performance.now();
        await app.get(BatchDelivery).deliver('bench-batch', partner.partnerId, sendDay);
        const deliveredSec = (performance.now() - t0) / 1000;
        const delivered = sink.count() - before;

        // The same messages, bare.
        const summary = await app.get(DealSummaries).of((await app.get(CatalogQueries).deal(deal.id))!, new Date());
        const accounts = app.get(AccountQueries);
        const emails = await Promise.all(
          users.map(async (id) => dealEmail(summary, (await accounts.user(partner.partnerId, id))!.profile.email, `<bare-${id}@bench>`)),
        );
        const transport = nodemailer.createTransport({ url: sink.url, pool: true, maxConnections: 5, maxMessages: 1000 });
        const bareBefore = sink.count();
        const t1 = performance.now();
        let k = 0;
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            for (let i = k++; i < emails.length; i = k++) {
              const e = emails[i];
              await transport.sendMail({
                from: 'Deals <deals@deals.example.com>',
                to: e.to,
                subject: e.subject,
                text: e.text,
                html: e.html,
                messageId: e.messageId,
              });
            }
          }),
        );
        const bareSec = (performance.now() - t1) / 1000;
        const bare = sink.count() - bareBefore;
        transport.close();
        return [
          row(
            `batch delivery, ${recipients.toLocaleString('en-US')} recipients, emails/s`,
            delivered / deliveredSec,
            'emails/s',
            'bare nodemailer pooled sends of the same messages, same sink',
            bare / bareSec,
            {
              limitUnit: 'emails/s',
              aim: { min: AIM },
              notes: [
                `batch delivery: ${delivered} of ${recipients} messages at the sink in ${deliveredSec.toFixed(1)} s (each: user read, message rendered, SMTP send over a 5-connection pool with 10 in flight, outcome appended); ` +
                  `bare nodemailer: ${bare} messages in ${bareSec.toFixed(1)} s (same renderer, pool and concurrency, nothing recorded); sink: smtp-server in this process, counting only`,
              ],
            },
          ),
        ];
      } finally {
        await api.close();
      }
    });
  } finally {
    await sink.close();
  }
}
