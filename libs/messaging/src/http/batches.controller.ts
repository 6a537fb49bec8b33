import { NotFound, ValidationFailed, ViewProgress } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Caller, CurrentCaller, RequestParameters, CalledBy, PARTNERS } from '@deals/wire';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CatalogQueries } from '@deals/catalog';
import { CancelTargetedBatch, ScheduleTargetedBatch } from '../commands/batch.commands';
import { BATCH_DETAILS, BatchDetails } from '../projections/batch-details/batch-details.projection';
import { BatchQueries } from '../queries/batch.queries';
import { BatchAnswer, CancelledBatchAnswer, toBatch } from './batches.answers';
import { BatchGuardParams, BatchPathParams, CreateBatchParams } from './batches.request';

/** Targeted-email batches of a deal: scheduled, read, cancelled. */
@ApiTags('messaging')
@Controller('v1/targeted_email/batches')
export class BatchesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly batches: BatchQueries,
    private readonly catalog: CatalogQueries,
    private readonly progress: ViewProgress,
  ) {}

  @Post()
  @CalledBy(...PARTNERS)
  @HttpCode(201)
  @ApiOperation({
    summary: 'Schedule a targeted-email batch',
    description:
      "`deal_id` (in flight or approved), `user_ids` (at most 1000), `mode` (suppress or augment), `send_at` (UTC, tomorrow, within the deal's run). " +
      "Unknown users and users already in another batch of that day are dropped; at most 10,000 users a partner's day. Every refusal is a 422 naming its field, in a fixed message.",
  })
  @ApiAnswer(BatchAnswer, { status: 201, errors: [422] })
  @ApiRequest({ body: CreateBatchParams })
  async create(@RequestParameters() params: CreateBatchParams, @CurrentCaller() caller: Caller) {
    const { batchId, position } = await this.commands.execute(
      new ScheduleTargetedBatch(params.dealId, params.userIds, params.mode, params.sendAt, caller),
    );
    return { status: 'success', batch: toBatch(await this.read(caller, batchId, position)) };
  }

  @Get(':batch_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: 'A targeted-email batch', description: "`deal_id` guards that the batch is that deal's." })
  @ApiAnswer(BatchAnswer, { errors: [404, 422] })
  @ApiRequest({ params: BatchPathParams, query: BatchGuardParams })
  async one(@Param() path: BatchPathParams, @RequestParameters() guard: BatchGuardParams, @CurrentCaller() caller: Caller) {
    const batch = await this.guarded(caller, path.batch_id, guard.deal_id as string);
    return { status: 'success', batch: toBatch(batch) };
  }

  @Delete(':batch_id')
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: 'Cancel a targeted-email batch',
    description: 'Pending → cancelled (never sent, even if its job was queued); a batch being sent or sent: 422.',
  })
  @ApiAnswer(CancelledBatchAnswer, { errors: [404, 422] })
  @ApiRequest({ params: BatchPathParams, query: BatchGuardParams })
  async cancel(@Param() path: BatchPathParams, @RequestParameters() guard: BatchGuardParams, @CurrentCaller() caller: Caller) {
    await this.guarded(caller, path.batch_id, guard.deal_id as string);
    const { position } = await this.commands.execute(new CancelTargetedBatch(path.batch_id, caller));
    return { status: 'success', batch: toBatch(await this.read(caller, path.batch_id, position)) };
  }

  /** The partner's batch, once `deal_id` names its deal (else `unknown deal` or `does not match this batch`). */
  private async guarded(caller: Caller, batchId: string, dealId: string): Promise<BatchDetails> {
    const batch = await this.batches.batch(caller.partnerId, batchId);
    if (!batch) throw new NotFound('batch not found');
    const message = !(await this.catalog.deal(dealId)) ? 'unknown deal' : batch.dealId !== dealId ? 'does not match this batch' : null;
    if (message) throw new ValidationFailed([{ type: 'invalid', resource: 'batch', field: 'deal_id', message }]);
    return batch;
  }

  private async read(caller: Caller, batchId: string, position: Parameters<ViewProgress['waitFor']>[1]): Promise<BatchDetails> {
    await this.progress.waitFor([BATCH_DETAILS], position);
    const batch = await this.batches.batch(caller.partnerId, batchId);
    if (!batch) throw new NotFound('batch not found');
    return batch;
  }
}
