/**
 * The bytes a job will keep stored, counted against its key's MAX_STORED_BYTES_PER_KEY when it is
 * created (an upper estimate: the outputs are not known yet): its binary inputs, and for each
 * algorithm a solution (n float64) and a trace of at most TRACE_CAP points (an int32 iteration and
 * three float64 series), plus the document, whose result holds the m x m principal angles, plus the
 * checkpoint a running solve keeps (../checkpoints.ts; deleted when it ends).
 */
import type { AlgorithmId } from '../../solvers/algorithms/registry.js';
import { nnzOf } from '../../solvers/sparse/csr.js';
import type { JobSpec } from '../types.js';

/**
 * A document's fixed part: the analysis without its m x m angles (metrics, bounds, the
 * recommendation's sentences, the time to solution of six algorithms with its calibration and
 * deployment), the options and the runs' summaries. 4 KB was exceeded once the time to solution was
 * added (a checkpoint of test/jobs/checkpoints.test.ts came out 416 bytes over its bound).
 */
const DOCUMENT_BYTES = 8192;
/** One trace point: iteration (int32), relative residual, relative error, consensus distance (float64). */
const TRACE_POINT_BYTES = 4 + 3 * 8;
/** A number of the result's JSON (principal angles theta_ij, m x m), as written. */
const JSON_NUMBER_BYTES = 24;

export function storedBytesOfJob(spec: JobSpec, traceCap: number): number {
  const matrix = 'A' in spec.matrix ? typedArrayBytes(spec.matrix.A) : 0;
  const inputs = matrix + (spec.rhs?.byteLength ?? 0) + (spec.initialGuess?.byteLength ?? 0) + spec.assignment.byteLength;
  const outputs = spec.algorithms.length * columnsOf(spec) * (spec.n * 8 + traceCap * TRACE_POINT_BYTES);
  const angles = spec.m * spec.m * JSON_NUMBER_BYTES;
  return inputs + outputs + DOCUMENT_BYTES + angles + checkpointBytesOfJob(spec, traceCap);
}

/**
 * A column's summary in the JSON of a document or a checkpoint, beyond the one DOCUMENT_BYTES
 * allows for: its measures, parameters and stop reason, or a running column's measures and trace
 * counters.
 */
const COLUMN_JSON_BYTES = 2048;

/** Right-hand sides of a job: its runs' columns. */
const columnsOf = (spec: JobSpec): number => spec.rhsColumns ?? 1;

/**
 * The largest checkpoint of a solve job (0 for an analysis: it saves none): the analysis, the runs
 * that ended (their outputs again) and the state of the run under way with its trace, the largest
 * state of the job's algorithms (../../solvers/algorithms: IterativeMethod.state), each k times for
 * k right-hand sides (a block run's state is k columns of it: ../../solvers/algorithms/blockMethods.ts).
 */
export function checkpointBytesOfJob(spec: JobSpec, traceCap: number): number {
  if (spec.type !== 'solve' || spec.algorithms.length === 0) return 0;
  const k = columnsOf(spec);
  const outputs = spec.algorithms.length * k * (spec.n * 8 + traceCap * TRACE_POINT_BYTES);
  const state = Math.max(...spec.algorithms.map((algorithm) => stateDoubles(algorithm, spec)));
  const columnsJson = k > 1 ? (spec.algorithms.length + 1) * k * COLUMN_JSON_BYTES : 0;
  return DOCUMENT_BYTES + spec.m * spec.m * JSON_NUMBER_BYTES + outputs + k * (state * 8 + traceCap * TRACE_POINT_BYTES) + columnsJson;
}

/** Doubles of a run's state per right-hand side: the estimate, and what the method carries beside it. */
function stateDoubles(algorithm: AlgorithmId, spec: JobSpec): number {
  const { n, m } = spec;
  switch (algorithm) {
    case 'dgd':
    case 'cimmino':
      return n;
    case 'dhbm':
    case 'dnag':
      return 2 * n;
    case 'apc':
    case 'mlm': {
      // xbar and the machines' estimates: m of them on dense storage; on CSR (and in a block run on
      // any storage) y and each machine's offsets on its column support (at most one column per
      // stored entry, at most n), plus two measures.
      if (spec.storage === 'dense') return (columnsOf(spec) > 1 ? 2 * n : n) + m * n + 2;
      const nnz = spec.matrix.kind === 'csr' ? nnzOf(spec.matrix.A) : spec.matrix.kind === 'stored' ? spec.matrix.nnz : m * n;
      return 2 * n + Math.min(nnz, m * n) + 2;
    }
  }
}

/** The bytes of a matrix's arrays, whatever its storage (dense data, or CSR rowPtr, colIdx, values). */
function typedArrayBytes(matrix: object): number {
  return Object.values(matrix).reduce<number>((sum, value) => sum + (ArrayBuffer.isView(value) ? value.byteLength : 0), 0);
}
