/**
 * Names of the Redis keys and channels the job layer writes, next to (not inside) BullMQ's own
 * `${KEY_PREFIX}:${QUEUE_NAME}:*` keys.
 */
import { ALGORITHM_IDS, type AlgorithmId } from '../../solvers/algorithms/registry.js';
import { csrKeys } from './matrixStore.js';

export class JobKeys {
  private readonly base: string;
  /** Sorted set of job ids scored by creation time (ms). */
  readonly index: string;
  /** Pub/sub: ids of running jobs to cancel (every worker process listens). */
  readonly cancelChannel: string;
  /** Pub/sub: `{ id, status }` after every status change of a job document. */
  readonly statusChannel: string;

  constructor(keyPrefix: string, queueName: string) {
    this.base = `${keyPrefix}:store:${queueName}`;
    this.index = `${this.base}:index`;
    this.cancelChannel = `${this.base}:cancel`;
    this.statusChannel = `${this.base}:status`;
  }

  /** The job document (a hash). */
  doc(id: string): string {
    return `${this.base}:job:${id}`;
  }

  /** A hash: the `notify` url and secret (read only by the delivery worker: ../notify/notifyWorker.ts). */
  notify(id: string): string {
    return `${this.doc(id)}:notify`;
  }

  /** A: n*n float64, row-major. */
  matrix(id: string): string {
    return `${this.doc(id)}:A`;
  }

  /** Prefix of A's binary CSR keys (./matrixStore.ts's csrKeys), for a sparse coordinate input. */
  csr(id: string): string {
    return `${this.doc(id)}:csr`;
  }

  /** Prefix of the temporary CSR keys while a job is being created. */
  pendingCsr(id: string): string {
    return `${this.doc(id)}:pending`;
  }

  /** b: n float64 (absent when b = A * ones). */
  rhs(id: string): string {
    return `${this.doc(id)}:rhs`;
  }

  /** x(0) of the runs: n float64 (options.initialGuess; absent when the runs start at 0). */
  initialGuess(id: string): string {
    return `${this.doc(id)}:x0`;
  }

  /** assignment: n int32. */
  assignment(id: string): string {
    return `${this.doc(id)}:assignment`;
  }

  solution(id: string, algorithm: AlgorithmId): string {
    return `${this.doc(id)}:x:${algorithm}`;
  }

  /** A hash: meta (JSON) and one binary field per trace array. */
  trace(id: string, algorithm: AlgorithmId): string {
    return `${this.doc(id)}:trace:${algorithm}`;
  }

  /**
   * Several right-hand sides: a hash of the solutions and traces of columns j >= 1 (column 0's are the
   * keys above), fields `j:x` and `j:meta`, `j:iteration`... as in a trace's hash.
   */
  columns(id: string, algorithm: AlgorithmId): string {
    return `${this.doc(id)}:columns:${algorithm}`;
  }

  /**
   * A running job's latest checkpoint (./checkpointCodec.ts: one binary string, replaced at every
   * save), deleted when the job finishes and expiring with the document.
   */
  checkpoint(id: string): string {
    return `${this.doc(id)}:checkpoint`;
  }

  /** Sorted set of one owner's (API key's) job ids, as `index` (GET /v1/jobs for a tenant). */
  ownerIndex(owner: string): string {
    return `${this.base}:owner:${owner}:index`;
  }

  /** Set of one owner's job ids that may still be queued or running (pruned as they finish). */
  ownerActive(owner: string): string {
    return `${this.base}:owner:${owner}:active`;
  }

  /** Hash of when each of ownerActive's ids was admitted (ms): one without a document yet is still being created. */
  ownerAdmitted(owner: string): string {
    return `${this.base}:owner:${owner}:activeSince`;
  }

  /**
   * One owner's stored bytes: a hash (document key -> bytes counted), a sorted set (document key ->
   * when to look at it again, ms) and the total (a string), see ../apiKeys/tenantUsage.ts.
   */
  ownerUsage(owner: string): { bytes: string; expiry: string; total: string } {
    const base = `${this.base}:owner:${owner}`;
    return { bytes: `${base}:bytes`, expiry: `${base}:bytesExpiry`, total: `${base}:bytesTotal` };
  }

  /**
   * The document and the keys written with it at creation (inputs, callback target), document first:
   * what a finishing job keeps for JOB_TTL_SECONDS from its end (its outputs are written with that TTL).
   */
  documentAndInputsOf(id: string): string[] {
    return [
      this.doc(id),
      this.matrix(id),
      ...Object.values(csrKeys(this.csr(id))),
      this.rhs(id),
      this.initialGuess(id),
      this.assignment(id),
      this.notify(id),
    ];
  }

  /** Every key that may exist for a job, document first. */
  allOf(id: string): string[] {
    return [
      ...this.documentAndInputsOf(id),
      ...ALGORITHM_IDS.flatMap((a) => [this.solution(id, a), this.trace(id, a), this.columns(id, a)]),
      this.checkpoint(id),
    ];
  }
}
