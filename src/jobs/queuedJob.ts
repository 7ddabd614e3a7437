/**
 * What BullMQ carries for a job: its id only. The job document in Redis (./store/jobDocument.ts)
 * is the one source of truth for its type, options and inputs; the BullMQ job name is the job
 * type, for people reading the queue.
 */
export interface QueuedJobData {
  id: string;
}

/** What the processor returns to BullMQ (kept small: the result lives in the job document). */
export interface ProcessorReturn {
  /** 'split': the analysis goes on as a flow of parts (./splitAnalysis/splitAnalysisFlow.ts). */
  status: 'succeeded' | 'skipped' | 'split';
}
