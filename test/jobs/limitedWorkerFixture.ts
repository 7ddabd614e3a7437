/**
 * A sandboxed processor for test/jobs/limitedWorker.test.ts: it "computes" for job.data.computeMs, reports that done when
 * job.data.report (as src/jobs/processor.ts does before writing the job's outcome), then "writes" for job.data.writeMs.
 */
import { reportComputed } from '../../src/jobs/attemptComputed.js';

export default async function (job: { data: { computeMs: number; writeMs: number; report: boolean } }): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, job.data.computeMs));
  if (job.data.report) reportComputed();
  await new Promise((resolve) => setTimeout(resolve, job.data.writeMs));
  return 'written';
}
