import { CardLinkAudit, cardLinkStream } from '@deals/engagement';
import {
  auditedEvent,
  HistoryProofs,
  StreamProof,
  isoInstant,
  NotFound,
  RecordedEvent,
  ValidationFailed,
  verifyStreamProof,
} from '@deals/kernel';
import { batchDeliveryStream } from '@deals/messaging';
import { PurchaseAudit, purchaseStream } from '@deals/purchasing';
import { ApiErrors, ApiRequest, requestDto, CalledBy } from '@deals/wire';
import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import type { FastifyReply } from 'fastify';
import { createPublicKey, KeyObject } from 'node:crypto';
import { AUDIT_PAGE_POLICY, auditPage, TimelineEntry } from './audit-page';

/** Longer than any id the service makes: such a path names nothing (and is not looked up). */
const MAX_ID = 64;

const pageQuery = z
  .object({
    as_of: z
      .string()
      .optional()
      .meta({ description: 'the history as it stood at this instant (ISO 8601); empty or absent: now', example: '2026-06-15T12:00:00Z' }),
  })
  .meta({ 'x-resource': 'request' });
class AuditPageQuery extends requestDto(pageQuery) {}
const idOf = (name: string, resource: string) => z.object({ [name]: z.string().min(1) }).meta({ 'x-resource': resource });
class PurchasePageParams extends requestDto(idOf('purchase_id', 'purchase')) {}
class CardLinkPageParams extends requestDto(idOf('card_link_id', 'card_link')) {}
class BatchPageParams extends requestDto(idOf('batch_id', 'batch')) {}

/** What each page answers: HTML for a browser. */
const HtmlPage = () =>
  ApiResponse({
    status: 200,
    description: 'the page (HTML: no script, nothing loaded from elsewhere)',
    content: { 'text/html': { schema: { type: 'string' } } },
  });

/**
 * The auditor's pages, for a browser: a purchase's, a card link's and a batch's delivery timeline,
 * each checked against the log's seal, as of an instant. Auditor credentials only (the v3 username
 * and password as basic credentials, which the browser asks for, or the API key); a partner's are
 * refused. Server-rendered: no script, nothing loaded from elsewhere.
 */
@ApiTags('audit')
@Controller('audit/pages')
export class AuditPagesController {
  private publicKey: KeyObject | null = null;

  constructor(
    private readonly proofs: HistoryProofs,
    private readonly purchases: PurchaseAudit,
    private readonly cardLinks: CardLinkAudit,
  ) {}

  @Get('purchases/:purchase_id')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A purchase's audit page",
    description:
      'For auditor credentials, in a browser: every event that concerns the purchase with who caused it and its state after, ' +
      'each event’s seal result and the purchase stream verified against signed checkpoints; `as_of` cuts the timeline.',
  })
  @HtmlPage()
  @ApiErrors(403, 404, 422)
  @ApiRequest({ params: PurchasePageParams, query: AuditPageQuery })
  async purchase(@Param() params: PurchasePageParams, @Query() query: AuditPageQuery, @Res() reply: FastifyReply) {
    const id = params.purchase_id as string;
    this.knownLength(id);
    const asOf = asOfOf(query.as_of);
    const proof = await this.proofs.streamProof(purchaseStream(id));
    const entries = await this.timeline(proof, async () =>
      (await this.purchases.history(id, asOf)).map((e) => ({ ...e, state: e.purchaseState })),
    );
    return this.send(reply, `Purchase ${id}`, proof, entries, asOf);
  }

  @Get('card_links/:card_link_id')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A card link's audit page",
    description:
      'For auditor credentials, in a browser: its place on the deal and its own events with who caused each, its state and totals after, ' +
      'each event’s seal result and its stream verified against signed checkpoints; `as_of` cuts the timeline.',
  })
  @HtmlPage()
  @ApiErrors(403, 404, 422)
  @ApiRequest({ params: CardLinkPageParams, query: AuditPageQuery })
  async cardLink(@Param() params: CardLinkPageParams, @Query() query: AuditPageQuery, @Res() reply: FastifyReply) {
    const id = params.card_link_id as string;
    this.knownLength(id);
    const asOf = asOfOf(query.as_of);
    const cents = (amount: number) => `$${(amount / 100).toFixed(2)}`;
    const proof = await this.proofs.streamProof(cardLinkStream(id));
    const entries = await this.timeline(proof, async () =>
      (await this.cardLinks.history(id)).map((e) => ({
        ...e,
        state: `${e.linkState}; incentives ${cents(e.incentiveCents)}, fees ${cents(e.feeCents)}`,
      })),
    );
    return this.send(reply, `Card link ${id}`, proof, entries, asOf);
  }

  @Get('batches/:batch_id')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A targeted-email batch's audit page",
    description:
      'For auditor credentials, in a browser: its delivery’s events (each recipient’s outcome) with the running counts, ' +
      'each event’s seal result and the stream verified against signed checkpoints; `as_of` cuts the timeline.',
  })
  @HtmlPage()
  @ApiErrors(403, 404, 422)
  @ApiRequest({ params: BatchPageParams, query: AuditPageQuery })
  async batch(@Param() params: BatchPageParams, @Query() query: AuditPageQuery, @Res() reply: FastifyReply) {
    const id = params.batch_id as string;
    this.knownLength(id);
    const asOf = asOfOf(query.as_of);
    const proof = await this.proofs.streamProof(batchDeliveryStream(id));
    if (proof.events.length === 0 && proof.removed.length === 0) throw new NotFound('batch has no delivery');
    const counts = { sent: 0, failed: 0, skipped: 0 };
    const entries = proof.events.map((event) => {
      const outcome = (event.data as { outcome?: string; status?: string }).outcome;
      if (outcome === 'sent' || outcome === 'failed' || outcome === 'skipped') counts[outcome]++;
      const status = (event.data as { status?: string }).status;
      return {
        ...auditedEvent({ ...event, streamId: proof.stream } as RecordedEvent),
        state: `${status ? `${status}: ` : ''}sent ${counts.sent}, failed ${counts.failed}, skipped ${counts.skipped}`,
      };
    });
    return this.send(reply, `Email batch ${id}: delivery`, proof, entries, asOf);
  }

  /**
   * The resource's timeline as `read` gives it; when its history cannot be read (its first events
   * deleted from the log), the sealed stream's events as they are, so that the page still shows
   * what its verification finds.
   */
  private async timeline(proof: StreamProof, read: () => Promise<TimelineEntry[]>): Promise<TimelineEntry[]> {
    try {
      return await read();
    } catch (error) {
      if (proof.events.length === 0 && proof.removed.length === 0) throw error;
      return proof.events.map((event) => ({
        ...auditedEvent({ ...event, streamId: proof.stream } as RecordedEvent),
        state: '(its history does not read)',
      }));
    }
  }

  private knownLength(id: string): void {
    if (id.length > MAX_ID) throw new NotFound('not found');
  }

  private send(reply: FastifyReply, title: string, proof: StreamProof, entries: TimelineEntry[], asOf: Date | null) {
    this.publicKey ??= createPublicKey(this.proofs.publicKeyPem());
    const verification = verifyStreamProof(proof, this.publicKey);
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', AUDIT_PAGE_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .send(auditPage({ title, stream: proof.stream, entries, verification, asOf }));
  }
}

/** The `as_of` asked: none when absent or empty (the page's form sends it empty), else an ISO 8601 instant. */
function asOfOf(text: unknown): Date | null {
  if (text === undefined || text === '') return null;
  const cut = typeof text === 'string' ? isoInstant(text.trim()) : null;
  if (!cut) throw new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'as_of', message: 'must be an ISO 8601 instant' }]);
  return cut;
}
