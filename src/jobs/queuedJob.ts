/**
 * What BullMQ carries for a job: references and small options only. The matrix, rhs and partition
 * are binary values in Redis under the job's own keys (see ./store/keys.ts).
 */
import type { AlgorithmId } from '../solvers/algorithms/registry.js';
import type { StoredInput } from './store/jobDocument.js';
import type { JobOptions, JobType } from './types.js';

export interface QueuedJobData {
  id: string;
  type: JobType;
  n: number;
  m: number;
  algorithms: AlgorithmId[];
  options: JobOptions;
  input: StoredInput;
  hasRhs: boolean;
}

/** What the processor returns to BullMQ (kept small: the result lives in the job document). */
export interface ProcessorReturn {
  status: 'succeeded' | 'skipped';
}
