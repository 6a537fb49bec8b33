import { CatalogLinks } from '@deals/catalog';
import { isSandbox, NotFound, ViewProgress, WrittenNotShown } from '@deals/kernel';
import {
  ApiAnswer,
  ApiErrors,
  ApiRequest,
  Caller,
  CalledBy,
  CurrentCaller,
  CurrentPartner,
  NoBody,
  NotUnderTestClock,
  PartnerRef,
  PARTNERS,
  ReadsViews,
} from '@deals/wire';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AcceptBulkJob } from '../commands/accept-bulk-job.command';
import { CancelBulkJob } from '../commands/cancel-bulk-job.command';
import { BULK_JOB_ITEMS } from '../projections/bulk-job-items/bulk-job-items.projection';
import { BULK_JOBS, BulkJobView } from '../projections/bulk-jobs/bulk-jobs.projection';
import { BulkJobQueries } from '../queries/bulk-job.queries';
import {
  BULK_JOB_LIMITS,
  BulkJobAnswer,
  BulkJobListAnswer,
  BulkJobResultsAnswer,
  bulkResultsCsv,
  toBulkItemResult,
  toBulkJob,
} from './bulk-jobs.answers';
import { BulkJobListQuery, BulkJobParams, BulkJobResultsQuery, CreateBulkJobBody } from './bulk-jobs.request';

/** The largest body a job is sent in: ten thousand users of a few hundred bytes each. */
export const BULK_BODY_LIMIT = 16 * 1024 * 1024;

const CSV_EXAMPLE =
  'index,reference,status,resource_id,done_by_job,http_status,error_type,error_msg\n' +
  '0,"crm-1","succeeded","0b5e3c9a-51f2-8d1e-9a7b-2c4d6e8f0a1b",,,,\n' +
  '1,"crm-2","failed",,,422,"validation_failed","email is invalid"\n';

/** A partner's bulk jobs: many items of one kind, accepted at once, run in the background, each with its result. */
@ApiTags('bulk jobs')
@Controller('v1/bulk_jobs')
export class BulkJobsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: BulkJobQueries,
    private readonly progress: ViewProgress,
    private readonly links: CatalogLinks,
  ) {}

  @Post()
  @CalledBy(...PARTNERS)
  @UseGuards(NotUnderTestClock)
  @RouteConfig({ bodyLimit: BULK_BODY_LIMIT })
  @ApiOperation({
    summary: 'Start a bulk job',
    description:
      '`kind` and `items`, each with the fields of the single call it stands for and a `reference` of the partner’s own. ' +
      'Answered at once (202) with the job, queued behind the partner’s open job if any; its items then run in the background, ' +
      'through the same checks as the single calls, at a pace that leaves the partner’s requests their budget (items are not counted against it). ' +
      'Each item’s result (done, matched, already done by an earlier job, or refused with the error body its single call answers) is read ' +
      'from the job’s results; `bulk_job.completed` goes to the event feed and webhooks when the last is in. ' +
      `At most ${BULK_JOB_LIMITS.max_items.toLocaleString('en-US')} items a job and ${BULK_JOB_LIMITS.max_open_jobs} jobs open a partner (429 too_many_bulk_jobs).`,
  })
  @ApiAnswer(BulkJobAnswer, { status: 202, description: 'accepted: its items run in the background', errors: [422, 429, 503] })
  @ApiRequest({ body: CreateBulkJobBody })
  async create(@Body() body: CreateBulkJobBody, @CurrentCaller() caller: Caller, @CurrentPartner() partner: PartnerRef) {
    // The key that sent it (a v3 password sends none): the job ends with it if it is revoked.
    const keyId = partner.credentialId === 'password' ? undefined : partner.credentialId;
    const { jobId, position } = await this.commands.execute(new AcceptBulkJob(body.kind, body.items, caller, keyId));
    await this.progress.waitFor([BULK_JOBS], position);
    // Accepted, but the view does not show it yet (its worker behind or away): a 503 naming it, never "not found".
    const job = await this.queries.job(caller.partnerId, jobId);
    // eslint-disable-next-line no-restricted-syntax -- the id the service gave the job
    if (!job) throw new WrittenNotShown(`bulk job ${jobId} was accepted; it is not readable yet`, { bulk_job_id: jobId });
    return { status: 'success', bulk_job: this.body(job), limits: BULK_JOB_LIMITS };
  }

  @Get()
  @CalledBy(...PARTNERS)
  @ReadsViews(BULK_JOBS)
  @ApiOperation({ summary: "The partner's bulk jobs", description: 'Newest first; `count`, `per_page`, `page`.' })
  @ApiAnswer(BulkJobListAnswer, { errors: [422] })
  @ApiRequest({ query: BulkJobListQuery })
  async list(@Query() query: BulkJobListQuery, @CurrentCaller() caller: Caller) {
    const { paging } = query;
    if (paging.count) return { status: 'success', count: await this.queries.countJobs(caller.partnerId) };
    const jobs = await this.queries.jobs(caller.partnerId, paging.skip, paging.perPage);
    return { status: 'success', bulk_jobs: jobs.map((job) => this.body(job)), limits: BULK_JOB_LIMITS };
  }

  @Get(':bulk_job_id')
  @CalledBy(...PARTNERS)
  @ReadsViews(BULK_JOBS)
  @ApiOperation({ summary: 'A bulk job', description: 'Where it stands: its status and how many items have which result.' })
  @ApiAnswer(BulkJobAnswer, { errors: [404] })
  @ApiRequest({ params: BulkJobParams })
  async one(@Param() params: BulkJobParams, @CurrentCaller() caller: Caller) {
    return { status: 'success', bulk_job: this.body(await this.found(caller, params.bulk_job_id)), limits: BULK_JOB_LIMITS };
  }

  @Post(':bulk_job_id/cancel')
  @HttpCode(200)
  @CalledBy(...PARTNERS)
  @UseGuards(NotUnderTestClock)
  @ApiOperation({
    summary: 'Cancel a bulk job',
    description:
      'No chunk of the job starts from now on. A job not started yet is `cancelled` at once; a running one is `cancelling` ' +
      'until the items of its chunk under way (at most ' +
      `${BULK_JOB_LIMITS.items_per_result_write}) have their results, then \`cancelled\`: the items done keep their results, the others have none. ` +
      'It then leaves the partner’s open jobs, its items are erased, and `bulk_job.completed` says `cancelled`. ' +
      'Cancelling a cancelled job answers it again; a completed job answers 409 bulk_job_completed.',
  })
  @ApiAnswer(BulkJobAnswer, { errors: [404, 409, 503] })
  @ApiRequest({ params: BulkJobParams })
  async cancel(@Param() params: BulkJobParams, @NoBody() _body: void, @CurrentCaller() caller: Caller) {
    const jobId = params.bulk_job_id;
    const { position } = await this.commands.execute(new CancelBulkJob(jobId, caller));
    await this.progress.waitFor([BULK_JOBS], position);
    const job = await this.queries.job(caller.partnerId, jobId);
    // eslint-disable-next-line no-restricted-syntax -- the id the service gave the job
    if (!job) throw new WrittenNotShown(`bulk job ${jobId} was cancelled; it is not readable yet`, { bulk_job_id: jobId });
    return { status: 'success', bulk_job: this.body(job), limits: BULK_JOB_LIMITS };
  }

  @Get(':bulk_job_id/results')
  @CalledBy(...PARTNERS)
  @ReadsViews(BULK_JOBS, BULK_JOB_ITEMS)
  @ApiOperation({
    summary: "A bulk job's results",
    description: 'Each item’s result so far, in the job’s order; `count`, `per_page`, `page`.',
  })
  @ApiAnswer(BulkJobResultsAnswer, { errors: [404, 422] })
  @ApiRequest({ params: BulkJobParams, query: BulkJobResultsQuery })
  async results(@Param() params: BulkJobParams, @Query() query: BulkJobResultsQuery, @CurrentCaller() caller: Caller) {
    const job = await this.found(caller, params.bulk_job_id);
    const { paging } = query;
    if (paging.count) return { status: 'success', count: job.processed };
    const results = await this.queries.results(job._id, paging.skip, paging.perPage);
    return { status: 'success', bulk_job: this.body(job), results: results.map(toBulkItemResult) };
  }

  @Get(':bulk_job_id/results.csv')
  @CalledBy(...PARTNERS)
  @ReadsViews(BULK_JOBS, BULK_JOB_ITEMS)
  @ApiOperation({
    summary: "A bulk job's results as CSV",
    description: 'One line an item with a result so far, in the job’s order, LF line ends; a refusal by its error_type and error_msg.',
  })
  @ApiResponse({ status: 200, description: 'the results', content: { 'text/csv': { schema: { type: 'string' }, example: CSV_EXAMPLE } } })
  @ApiErrors(404)
  @ApiRequest({ params: BulkJobParams })
  async csv(@Param() params: BulkJobParams, @CurrentCaller() caller: Caller, @Res({ passthrough: true }) reply: FastifyReply) {
    const job = await this.found(caller, params.bulk_job_id);
    const results = await this.queries.allResults(job._id);
    void reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="bulk-job-${job._id}.csv"`);
    return bulkResultsCsv(results);
  }

  private async found(caller: Caller, jobId: string): Promise<BulkJobView> {
    const job = await this.queries.job(caller.partnerId, jobId);
    if (!job) throw new NotFound('bulk job not found');
    return job;
  }

  private body(job: BulkJobView) {
    return toBulkJob(job, this.links.apiBaseUrl, !isSandbox(job.partnerId));
  }
}
