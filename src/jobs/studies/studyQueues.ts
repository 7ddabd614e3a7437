/**
 * The studies' two BullMQ queues, separate from the jobs' queue and from any other flow: the
 * parents (`STUDY_QUEUE_NAME`, one per study: it aggregates once its children are done) and the
 * children (`STUDY_QUEUE_NAME-chunks`, a chunk of samples each; any worker on any host takes them).
 */
import type { Config } from '../../config.js';
import type { StudyLimits } from '../../solvers/studies/definition.js';

export interface StudyQueueNames {
  parents: string;
  chunks: string;
}

export function studyQueueNames(config: Pick<Config, 'STUDY_QUEUE_NAME'>): StudyQueueNames {
  return { parents: config.STUDY_QUEUE_NAME, chunks: `${config.STUDY_QUEUE_NAME}-chunks` };
}

/** BullMQ data of a parent job. */
export interface StudyParentData {
  id: string;
}

/** BullMQ data of a child: the study and the index of its chunk in the plan. */
export interface StudyChunkData {
  id: string;
  chunk: number;
}

/** A child's BullMQ job id (BullMQ ids may not contain ':'). */
export function chunkJobId(studyId: string, chunk: number): string {
  return `${studyId}-${chunk}`;
}

export function studyLimits(config: Config): StudyLimits {
  return {
    maxSamples: config.MAX_STUDY_SAMPLES,
    maxPointSamples: config.MAX_STUDY_POINT_SAMPLES,
    maxPoints: config.MAX_STUDY_POINTS,
    maxN: config.MAX_STUDY_N,
    // A stored matrix is analyzed on CSR, as jobs analyze it: the jobs' limit.
    maxNSparse: config.MAX_N_SPARSE,
  };
}
