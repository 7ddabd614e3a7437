/**
 * The bytes a job will keep stored, counted against its key's MAX_STORED_BYTES_PER_KEY when it is
 * created (an upper estimate: the outputs are not known yet): its binary inputs, and for each
 * algorithm a solution (n float64) and a trace of at most TRACE_CAP points (an int32 iteration and
 * three float64 series), plus the document, whose result holds the m x m principal angles.
 */
import type { JobSpec } from '../types.js';

const DOCUMENT_BYTES = 4096;
/** One trace point: iteration (int32), relative residual, relative error, consensus distance (float64). */
const TRACE_POINT_BYTES = 4 + 3 * 8;
/** A number of the result's JSON (principal angles theta_ij, m x m), as written. */
const JSON_NUMBER_BYTES = 24;

export function storedBytesOfJob(spec: JobSpec, traceCap: number): number {
  const matrix = 'A' in spec.matrix ? typedArrayBytes(spec.matrix.A) : 0;
  const inputs = matrix + (spec.rhs?.byteLength ?? 0) + spec.assignment.byteLength;
  const outputs = spec.algorithms.length * (spec.n * 8 + traceCap * TRACE_POINT_BYTES);
  return inputs + outputs + DOCUMENT_BYTES + spec.m * spec.m * JSON_NUMBER_BYTES;
}

/** The bytes of a matrix's arrays, whatever its storage (dense data, or CSR rowPtr, colIdx, values). */
function typedArrayBytes(matrix: object): number {
  return Object.values(matrix).reduce<number>((sum, value) => sum + (ArrayBuffer.isView(value) ? value.byteLength : 0), 0);
}
