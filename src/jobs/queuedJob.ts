/**
 * What BullMQ carries for a job: its id only. The job document in Redis (./store/jobDocument.ts)
 * is the one source of truth for its type, options and inputs; the BullMQ job name is the job
 * type, for people reading the queue.
 */
export interface QueuedJobData {
  id: string;
  /** The API key that owns the job (AUTH_MODE=keys): what ./apiKeys/fairShare.ts counts per key. */
  owner?: string;
}

/**
 * The jobs' BullMQ queues: `main` (QUEUE_NAME) for every job, `small` (`<QUEUE_NAME>-small`) for the
 * small-job slots of the workers (./apiKeys/fairShare.ts).
 */
export function jobQueueNames(config: { QUEUE_NAME: string }): { main: string; small: string } {
  return { main: config.QUEUE_NAME, small: `${config.QUEUE_NAME}-small` };
}

/** What the processor returns to BullMQ (kept small: the result lives in the job document). */
export interface ProcessorReturn {
  /** 'split': the analysis goes on as a flow of parts (./splitAnalysis/splitAnalysisFlow.ts). */
  status: 'succeeded' | 'skipped' | 'split';
}
