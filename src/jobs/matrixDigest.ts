/**
 * The content hash a job's document echoes for its matrix: SHA-256 (hex) of the matrix's canonical
 * CSR, so that one matrix has one hash whether it arrived as dense rows, COO, Matrix Market or a
 * stored upload, and whether the job computes on it dense or as CSR. The canonical CSR keeps the
 * nonzero entries only (an explicit 0 or -0 is dropped), columns ascending in each row, and is
 * hashed as three little-endian arrays, one after the other:
 *   rowPtr (N + 1 int32, N the rows), colIdx (nnz int32), values (nnz float64).
 * Reproduce it elsewhere, e.g. with SciPy: `A = csr_matrix(A); A.eliminate_zeros(); A.sort_indices();
 * sha256(A.indptr.astype('<i4').tobytes() + A.indices.astype('<i4').tobytes() + A.data.astype('<f8').tobytes())`.
 */
import { createHash, type Hash } from 'node:crypto';
import type { DenseMatrix } from '../solvers/matrix.js';
import type { CsrMatrix } from '../solvers/sparse/csr.js';
import type { MatrixDigest } from './types.js';

/** Entries written to the hash per update: bounds the scratch buffers of a large matrix. */
const BLOCK = 1 << 16;

export function matrixDigest(A: DenseMatrix | CsrMatrix): MatrixDigest {
  const n = A.rows;
  // A tall system's dense rows are N x cols (cols < N): index them by cols, never by N.
  const cols = A.cols;
  if (!('rowPtr' in A)) {
    const digest = denseWithoutZerosDigest(A.data, n, cols);
    if (digest !== null) return digest;
  }
  // Each entry visited in canonical order (CSR columns are strictly ascending, dense ones are by construction).
  const forEachNonzero =
    'rowPtr' in A
      ? (visit: (row: number, column: number, value: number) => void): void => {
          for (let i = 0; i < n; i++)
            for (let e = A.rowPtr[i]; e < A.rowPtr[i + 1]; e++) if (A.values[e] !== 0) visit(i, A.colIdx[e], A.values[e]);
        }
      : (visit: (row: number, column: number, value: number) => void): void => {
          const { data } = A;
          for (let i = 0; i < n; i++) {
            const offset = i * cols;
            for (let j = 0; j < cols; j++) if (data[offset + j] !== 0) visit(i, j, data[offset + j]);
          }
        };

  const rowPtr = new Int32Array(n + 1);
  forEachNonzero((row) => rowPtr[row + 1]++);
  for (let i = 0; i < n; i++) rowPtr[i + 1] += rowPtr[i];
  const hash = createHash('sha256');
  updateLittleEndian(hash, rowPtr);
  const columns = new Int32Array(BLOCK);
  streamBlocks(hash, columns, (emit) => forEachNonzero((_row, column) => emit(column)));
  const values = new Float64Array(BLOCK);
  streamBlocks(hash, values, (emit) => forEachNonzero((_row, _column, value) => emit(value)));
  return { nnz: rowPtr[n], sha256: hash.digest('hex') };
}

/**
 * The digest of a rows x cols row-major matrix with no zero entry (a generated one, as a rule), hashed
 * straight from its rows, without the per-entry passes; null when it has a zero. Same bytes as the
 * general path: rowPtr = 0, cols, 2 cols, ..., colIdx = 0 .. cols - 1 per row, values = the rows.
 */
function denseWithoutZerosDigest(data: Float64Array, rows: number, cols: number): MatrixDigest | null {
  const size = rows * cols;
  for (let k = 0; k < size; k++) if (data[k] === 0) return null;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i <= rows; i++) rowPtr[i] = i * cols;
  const hash = createHash('sha256');
  updateLittleEndian(hash, rowPtr);
  // Rows of column indices, as many per update as fit in BLOCK entries.
  const rowsPerBlock = Math.max(1, Math.floor(BLOCK / Math.max(1, cols)));
  const columns = new Int32Array(Math.min(rowsPerBlock, Math.max(1, rows)) * cols);
  for (let k = 0; k < columns.length; k++) columns[k] = k % cols;
  for (let row = 0; row < rows; row += rowsPerBlock)
    updateLittleEndian(hash, columns.subarray(0, Math.min(rowsPerBlock, rows - row) * cols));
  updateLittleEndian(hash, data.subarray(0, size));
  return { nnz: size, sha256: hash.digest('hex') };
}

/** Fill `scratch` with what `produce` emits, hashing it each time it is full and at the end. */
function streamBlocks(hash: Hash, scratch: Int32Array | Float64Array, produce: (emit: (value: number) => void) => void): void {
  let used = 0;
  produce((value) => {
    scratch[used++] = value;
    if (used === scratch.length) {
      updateLittleEndian(hash, scratch);
      used = 0;
    }
  });
  updateLittleEndian(hash, scratch.subarray(0, used));
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function updateLittleEndian(hash: Hash, array: Int32Array | Float64Array): void {
  const bytes = Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  if (LITTLE_ENDIAN) hash.update(bytes);
  else hash.update(array.BYTES_PER_ELEMENT === 8 ? Buffer.from(bytes).swap64() : Buffer.from(bytes).swap32());
}
