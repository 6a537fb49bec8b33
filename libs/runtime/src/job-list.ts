import { JobCounts, ListedJob, Scheduler } from '@deals/kernel';

/** The scheduled jobs as an operator sees them (`/admin/jobs`, `jobs:list`): counts by state and the soonest `limit`. */
export interface JobList {
  backend: string;
  counts: JobCounts;
  jobs: Array<Omit<ListedJob, 'runAt'> & { runAt: string }>;
}

export async function listJobs(scheduler: Scheduler, limit: number): Promise<JobList> {
  const [counts, jobs] = await Promise.all([scheduler.counts(), scheduler.list(limit)]);
  return { backend: scheduler.backend, counts, jobs: jobs.map((job) => ({ ...job, runAt: job.runAt.toISOString() })) };
}
