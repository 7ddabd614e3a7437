/**
 * Checkpoints of a running job, from which a retried attempt resumes: every CHECKPOINT_INTERVAL_MS
 * the attempt saves what it has done (the analysis once done, the runs it finished, the snapshot of the run under way,
 * of one right-hand side or of several: src/solvers/runner/snapshot.ts) under the job's checkpoint key, replacing the previous one; an
 * attempt that BullMQ retries after a crash (a killed worker, a stalled job, a restarted service)
 * reads it and goes on from there (./computeJob.ts), to the very result the uninterrupted attempt
 * would have had. computeJob decides what goes in and when; this module only writes.
 */
import type { Logger } from 'pino';
import type { SpectralData } from '../solvers/algorithms/types.js';
import { LatestWriter } from './latestWriter.js';
import { encodeCheckpoint, type JobCheckpoint } from './store/checkpointCodec.js';
import type { RunOutput } from './store/jobStore.js';
import type { JobResult } from './types.js';

/** A solve's result without its analysis: the runs' summaries and the spectral data they used (null: not computed). */
export function partialResult(runs: JobResult['runs'], spectral: SpectralData | null): JobResult {
  if (spectral === null) return { analysisCompleted: false, runs };
  const { L, mu, lambdaMinS, lambdaMaxS } = spectral;
  return { analysisCompleted: false, spectral: { L, mu, lambdaMinS, lambdaMaxS }, runs };
}

/**
 * What a job stopped from outside (its process killed at its time or memory limit) keeps of its last
 * checkpoint: the runs it had finished, their solutions and traces, with the spectral data they used
 * (the analysis when it was complete). Null when no run had finished.
 */
export function outcomeOfCheckpoint(checkpoint: JobCheckpoint): { result: JobResult; runs: RunOutput[] } | null {
  if (checkpoint.runs.length === 0) return null;
  const summaries: JobResult['runs'] = Object.fromEntries(checkpoint.runs.map(({ algorithm, summary }) => [algorithm, summary]));
  const runs = checkpoint.runs.map(({ algorithm, solution, trace, otherColumns }) => ({
    algorithm,
    solution,
    trace,
    ...(otherColumns === undefined ? {} : { otherColumns }),
  }));
  const { analysis } = checkpoint;
  const result =
    analysis === null ? partialResult(summaries, checkpoint.spectral ?? null) : { analysisCompleted: true, analysis, runs: summaries };
  return { result, runs };
}

/** What computeJob needs to checkpoint an attempt and to resume one. */
export interface JobCheckpointing {
  /** What an earlier attempt of the job saved; null: start from the beginning. */
  readonly resumeFrom: JobCheckpoint | null;
  /** Least time between two saves; 0: none (a checkpoint already stored is still resumed from). */
  readonly intervalMs: number;
  /** Stores `checkpoint` in place of the previous one; returns at once (the write goes on in the background). */
  save(checkpoint: JobCheckpoint): void;
  /** The earlier attempt's checkpoint does not fit this attempt (another version's): the run it held starts over. */
  discarded(reason: string): void;
}

/**
 * Writes a job's checkpoints one at a time, the latest waiting one next (./latestWriter.ts: each
 * replaces the last anyway). Encoding happens in save(), so the caller's arrays may change right after.
 */
export class CheckpointWriter {
  private readonly writer: LatestWriter<Buffer>;
  /** Bytes of the last checkpoint encoded. */
  lastBytes = 0;

  constructor(write: (bytes: Buffer) => Promise<unknown>, log: Logger) {
    // A failed write: the next save tries again; a retry then resumes from an older checkpoint, or from the start.
    this.writer = new LatestWriter(write, (err, bytes) => log.warn({ err, bytes: bytes.length }, 'checkpoint not stored'));
  }

  save(checkpoint: JobCheckpoint): void {
    const bytes = encodeCheckpoint(checkpoint);
    this.lastBytes = bytes.length;
    this.writer.save(bytes);
  }

  /** Resolves once every checkpoint saved so far is written (or failed to be). */
  flush(): Promise<void> {
    return this.writer.flush();
  }
}
