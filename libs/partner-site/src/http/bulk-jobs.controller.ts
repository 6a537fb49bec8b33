import {
  BULK_JOBS,
  BulkJobCompletedAlready,
  BulkJobQueries,
  bulkResultsCsv,
  BulkJobView,
  CancelBulkJob,
  isOpenBulkJob,
} from '@deals/bulk-jobs';
import { NotFound, ViewProgress } from '@deals/kernel';
import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { SignedInMember } from './member-sessions';
import { SiteRequest } from './site-state';
import { SitePages } from './site-pages';
import { accountCaller, CurrentMember, SitePageErrors } from './site-request';

/** Jobs listed, and results shown, a page at a time. */
const JOBS_SHOWN = 50;
const RESULTS_A_PAGE = 100;
/** A page of a job still running reloads itself this often (a meta refresh: no script). */
const REFRESH_SECONDS = 2;

const percent = (job: BulkJobView) => (job.itemCount === 0 ? 100 : Math.floor((job.processed * 100) / job.itemCount));

/** The partner's bulk jobs: their progress, each item's result, the results' CSV. */
@ApiExcludeController()
@UseFilters(SitePageErrors)
@Controller('partner/bulk-jobs')
export class BulkJobsPagesController {
  constructor(
    private readonly pages: SitePages,
    private readonly jobs: BulkJobQueries,
    private readonly commands: CommandBus,
    private readonly progress: ViewProgress,
  ) {}

  @Get()
  async list(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember) {
    const jobs = (await this.jobs.jobs(member.accountId, 0, JOBS_SHOWN)).map((job) => ({ ...job, percent: percent(job) }));
    const refreshSeconds = jobs.some((job) => isOpenBulkJob(job)) ? REFRESH_SECONDS : null;
    return this.pages.send(request, reply, 'bulk-jobs', { title: 'Bulk jobs', jobs, refreshSeconds });
  }

  @Get(':id')
  async one(
    @Req() request: SiteRequest,
    @Res() reply: FastifyReply,
    @CurrentMember() member: SignedInMember,
    @Param('id') id: string,
    @Query('page') pageText?: string,
  ) {
    const job = await this.found(member, id);
    const pages = Math.max(1, Math.ceil(job.processed / RESULTS_A_PAGE));
    const page = Math.min(pages, Math.max(1, Number.parseInt(pageText ?? '1', 10) || 1));
    const results = (await this.jobs.results(job._id, (page - 1) * RESULTS_A_PAGE, RESULTS_A_PAGE)).map((item) => ({
      ...item,
      errorType: item.error?.body.error_type ?? null,
      errorMessage: item.error?.body.error_msg ?? null,
    }));
    return this.pages.send(request, reply, 'bulk-job', {
      title: `Bulk job ${job._id}`,
      job: { ...job, percent: percent(job) },
      results,
      page,
      pages,
      previous: page > 1 ? page - 1 : null,
      next: page < pages ? page + 1 : null,
      refreshSeconds: isOpenBulkJob(job) ? REFRESH_SECONDS : null,
      cancellable: job.status === 'queued' || job.status === 'running',
    });
  }

  /** The job's cancel button: back to its page, which shows it cancelling or cancelled (a job completed meanwhile: as it is). */
  @Post(':id/cancel')
  async cancel(@Req() request: SiteRequest, @Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Param('id') id: string) {
    const job = await this.found(member, id);
    try {
      const { position } = await this.commands.execute(new CancelBulkJob(job._id, accountCaller(request, member)));
      await this.progress.waitFor([BULK_JOBS], position);
    } catch (error) {
      if (!(error instanceof BulkJobCompletedAlready)) throw error;
    }
    return reply.redirect(`/partner/bulk-jobs/${encodeURIComponent(job._id)}`, 303);
  }

  @Get(':id/results.csv')
  async csv(@Res() reply: FastifyReply, @CurrentMember() member: SignedInMember, @Param('id') id: string) {
    const job = await this.found(member, id);
    const csv = bulkResultsCsv(await this.jobs.allResults(job._id));
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="bulk-job-${job._id}.csv"`).send(csv);
  }

  private async found(member: SignedInMember, id: string): Promise<BulkJobView> {
    const job = await this.jobs.job(member.accountId, id);
    if (!job) throw new NotFound('bulk job not found');
    return job;
  }
}
