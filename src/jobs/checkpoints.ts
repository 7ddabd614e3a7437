/**
 * Checkpoints of a running job, from which a retried attempt resumes: every CHECKPOINT_INTERVAL_MS
 * the attempt saves what it has done (the analysis once done, the runs it finished, the snapshot of the run under way:
 * src/solvers/runner/snapshot.ts) under the job's checkpoint key, replacing the previous one; an
 * attempt that BullMQ retries after a crash (a killed worker, a stalled job, a restarted service)
 * reads it and goes on from there (./computeJob.ts), to the very result the uninterrupted attempt
 * would have had. computeJob decides what goes in and when; this module only writes.
 */
import type { Logger } from 'pino';
import { LatestWriter } from './latestWriter.js';
import { encodeCheckpoint, type JobCheckpoint } from './store/checkpointCodec.js';

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
