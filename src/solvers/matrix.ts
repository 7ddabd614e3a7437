/**
 * A dense real matrix stored row-major in one flat Float64Array: entry (i, j) is `data[i * cols + j]`.
 * Hot loops index `data` directly; the factorizations are this library's own (./linalg, ./sparse) or
 * the native backend's: src/ uses no matrix package (ml-matrix is a dev dependency, tests' reference).
 */
export interface DenseMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

/** A sparse matrix in compressed sparse rows (its functions: ./sparse/csr.ts). */
export interface CsrMatrix {
  readonly rows: number;
  readonly cols: number;
  /** Length rows + 1; rowPtr[0] = 0, rowPtr[rows] = nnz. */
  readonly rowPtr: Int32Array;
  /** Length nnz. */
  readonly colIdx: Int32Array;
  /** Length nnz. */
  readonly values: Float64Array;
}

/** Name of a matrix entry in messages, 0-based like the API: "matrix entry (i, j)". */
export function matrixEntryName(i: number, j: number): string {
  return `matrix entry (${i}, ${j})`;
}

export function zeros(rows: number, cols: number): DenseMatrix {
  return { rows, cols, data: new Float64Array(rows * cols) };
}

export function fromRows(rows: ArrayLike<ArrayLike<number>>): DenseMatrix {
  const r = rows.length;
  const c = r === 0 ? 0 : rows[0].length;
  const data = new Float64Array(r * c);
  for (let i = 0; i < r; i++) data.set(rows[i], i * c);
  return { rows: r, cols: c, data };
}

export function toRows(a: DenseMatrix): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < a.rows; i++) out.push(Array.from(a.data.subarray(i * a.cols, (i + 1) * a.cols)));
  return out;
}

/**
 * The columns in which the rows `rows` of a dense A have a nonzero, ascending: a machine's column support (./sparse/csr.ts
 * columnSupport for CSR storage).
 */
export function denseColumnSupport(A: DenseMatrix, rows: ArrayLike<number>): Int32Array {
  const n = A.cols;
  const used = new Uint8Array(n);
  // Counted as found, so that the scan stops once every column is used: on a dense matrix, after the first row.
  let c = 0;
  for (let k = 0; k < rows.length && c < n; k++) {
    const off = rows[k] * n;
    for (let j = 0; j < n; j++)
      if (used[j] === 0 && A.data[off + j] !== 0) {
        used[j] = 1;
        c++;
      }
  }
  const cols = new Int32Array(c);
  for (let j = 0, k = 0; j < n; j++) if (used[j]) cols[k++] = j;
  return cols;
}

/**
 * Rows rows[k0..k1) of a dense A at the columns `cols` (ascending; all of A's when cols.length === A.cols), row-major
 * into `out` (rows.length x cols.length) from its row k0: a machine's A_i on its column support, copied in slices by
 * callers that yield between them.
 */
export function copyRowsOnColumns(
  A: DenseMatrix,
  rows: ArrayLike<number>,
  cols: Int32Array,
  out: Float64Array,
  k0 = 0,
  k1 = rows.length,
): Float64Array {
  const n = A.cols;
  const c = cols.length;
  for (let k = k0; k < k1; k++) {
    const off = rows[k] * n;
    if (c === n) out.set(A.data.subarray(off, off + n), k * c);
    else for (let t = 0; t < c; t++) out[k * c + t] = A.data[off + cols[t]];
  }
  return out;
}

/** y = A x (y allocated when not given). */
export function matVec(a: DenseMatrix, x: Float64Array, y: Float64Array = new Float64Array(a.rows)): Float64Array {
  const { rows, cols, data } = a;
  for (let i = 0; i < rows; i++) {
    let s = 0;
    const off = i * cols;
    for (let j = 0; j < cols; j++) s += data[off + j] * x[j];
    y[i] = s;
  }
  return y;
}

export function dot(x: Float64Array, y: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * y[i];
  return s;
}

/** Euclidean norm, scaled so that it neither overflows nor underflows (LAPACK dnrm2 style). */
export function norm2(x: ArrayLike<number>, offset = 0, length = x.length - offset): number {
  let scale = 0;
  let ssq = 1;
  for (let k = offset; k < offset + length; k++) {
    const v = x[k];
    if (v !== 0) {
      const a = Math.abs(v);
      if (scale < a) {
        ssq = 1 + ssq * (scale / a) * (scale / a);
        scale = a;
      } else {
        ssq += (a / scale) * (a / scale);
      }
    }
  }
  return scale * Math.sqrt(ssq);
}

/** Relative residual |A x - b| / |b| computed with one pass over A (dense, or its stored entries when sparse). */
export function relativeResidual(a: DenseMatrix | CsrMatrix, x: Float64Array, b: Float64Array): number {
  let r: Float64Array;
  if ('rowPtr' in a) {
    const { rows, rowPtr, colIdx, values } = a;
    r = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      let s = 0;
      for (let e = rowPtr[i]; e < rowPtr[i + 1]; e++) s += values[e] * x[colIdx[e]];
      r[i] = s;
    }
  } else {
    r = matVec(a, x);
  }
  for (let i = 0; i < r.length; i++) r[i] -= b[i];
  const nb = norm2(b);
  return nb === 0 ? norm2(r) : norm2(r) / nb;
}
