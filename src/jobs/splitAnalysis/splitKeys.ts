/**
 * Names of a split analysis (./splitAnalysisFlow.ts): its BullMQ jobs on the service's queue (the
 * parent that combines, one child per part) and the Redis keys of what the parts return, next to
 * the job document (all under `${doc}:split:`, with the job's TTL; the parent deletes them when it
 * finishes the job).
 */
import type { AnalysisPart } from '../../solvers/analysis/splitAnalysis.js';
import type { QueuedJobData } from '../queuedJob.js';
import type { JobKeys } from '../store/keys.js';

/** BullMQ job names, so that the processor tells them from the jobs the API queues (named by job type). */
export const SPLIT_PART_JOB = 'analyze-split-part';
export const SPLIT_COMBINE_JOB = 'analyze-split-combine';

export interface SplitPartData extends QueuedJobData {
  /** Position of the part in the plan, and the plan's number of parts. */
  index: number;
  parts: number;
  part: AnalysisPart;
  /** The part's estimated work and the whole plan's (the job's progress is the work done). */
  work: number;
  totalWork: number;
}

export interface SplitCombineData extends QueuedJobData {
  parts: number;
}

export type SplitJobData = SplitPartData | SplitCombineData;

/** BullMQ ids: the parent's and each part's, derived from the job id (a retried coordinator adds the same flow, which BullMQ ignores). */
export const combineJobId = (id: string): string => `${id}-split`;
export const partJobId = (id: string, index: number): string => `${id}-split-${index}`;

export class SplitAnalysisKeys {
  constructor(private readonly keys: JobKeys) {}

  /** A hash: what part `index` returned (./partCodec.ts). */
  part(id: string, index: number): string {
    return `${this.keys.doc(id)}:split:part:${index}`;
  }

  /** A hash: part index -> its work done so far (estimated multiply-adds). */
  progress(id: string): string {
    return `${this.keys.doc(id)}:split:progress`;
  }

  /** A set: the worker processes (host:pid) that computed parts. */
  workers(id: string): string {
    return `${this.keys.doc(id)}:split:workers`;
  }

  all(id: string, parts: number): string[] {
    return [this.progress(id), this.workers(id), ...Array.from({ length: parts }, (_, k) => this.part(id, k))];
  }
}
