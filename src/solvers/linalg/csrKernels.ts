/**
 * The gradient methods' fused pass over a chunk of CSR rows, on each backend: term = A^T (A x - b)
 * and |A x - b|^2, each stored entry read from memory once (row k's residual r_k = a_k . x - b_k,
 * then term += r_k a_k while the row is in cache). Three implementations with one arithmetic: the
 * TypeScript loop below, the WebAssembly one (./wasm/rowKernels.wat, csrGradient, on a run's arena)
 * and the native addon's (native/src/csr_kernels.c, compiled without contraction). Each adds the
 * same products in the same order, so all three give the same gradient to the bit, and the
 * iterates never depend on the backend's kernels. Which one a thread uses is decided by
 * ../machines/placement.ts (PassKernels.csrGradient).
 */
import type { NativeCsr } from './backend.js';

/** A chunk of CSR rows and its right-hand side: row k's entries are colIdx / values[rowPtr[k] .. rowPtr[k + 1]), columns < c. */
export interface CsrRows {
  readonly p: number;
  readonly c: number;
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  readonly b: Float64Array;
}

/** The fused pass bound to one chunk (its arrays checked once, when bound). */
export interface CsrGradientKernel {
  /** term[termOffset .. termOffset + c) = A^T (A x - b), x read from x[xOffset ..]; returns |A x - b|^2. */
  run(x: Float64Array, xOffset: number, term: Float64Array, termOffset: number): number;
}

/** RangeError unless the chunk's arrays hold p rows with nondecreasing pointers and every column index below c. */
export function checkCsrRows(rows: CsrRows): void {
  const { p, c, rowPtr, colIdx, values, b } = rows;
  if (rowPtr.length < p + 1 || b.length < p) throw new RangeError(`CSR rows: ${p} rows need ${p + 1} pointers and ${p} right-hand sides.`);
  if (rowPtr[0] < 0) throw new RangeError('CSR rows: the row pointers start below 0.');
  for (let k = 0; k < p; k++) if (rowPtr[k + 1] < rowPtr[k]) throw new RangeError(`CSR rows: the row pointers decrease at row ${k}.`);
  if (rowPtr[p] > colIdx.length || rowPtr[p] > values.length) throw new RangeError('CSR rows: the row pointers run past the entries.');
  for (let e = rowPtr[0]; e < rowPtr[p]; e++)
    if (!(colIdx[e] >= 0 && colIdx[e] < c)) throw new RangeError(`CSR rows: column index ${colIdx[e]} of entry ${e} is not below ${c}.`);
}

/** The TypeScript loop (the reference the other two reproduce). */
export function typescriptCsrGradient(rows: CsrRows): CsrGradientKernel {
  const { p, c, rowPtr, colIdx, values, b } = rows;
  return {
    run(x, xOffset, term, termOffset) {
      term.fill(0, termOffset, termOffset + c);
      let residual2 = 0;
      for (let k = 0; k < p; k++) {
        const from = rowPtr[k];
        const to = rowPtr[k + 1];
        let s = 0;
        for (let e = from; e < to; e++) s += values[e] * x[xOffset + colIdx[e]];
        const r = s - b[k];
        residual2 += r * r;
        for (let e = from; e < to; e++) term[termOffset + colIdx[e]] += r * values[e];
      }
      return residual2;
    },
  };
}

/** The native addon's kernel, on a handle the addon checked once. */
export function nativeCsrGradient(csr: NativeCsr, rows: CsrRows): CsrGradientKernel {
  const handle = csr.csrRows(rows.p, rows.c, rows.rowPtr, rows.colIdx, rows.values, rows.b);
  return {
    run(x, xOffset, term, termOffset) {
      return csr.csrFusedGradient(handle, x, xOffset, term, termOffset);
    },
  };
}

/** CSR rows with support-local column indices, as the plain loops below read them. */
export interface CsrLoopRows {
  readonly p: number;
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/**
 * out[k] = a_k . v - bias[k] for k < p (v on the support; bias null: 0); returns |out|^2. A plain loop on
 * every backend (../machines/placement.ts measureCalibration times it for the time-to-solution model).
 */
export function csrRowProducts(rows: CsrLoopRows, v: Float64Array, bias: Float64Array | null, out: Float64Array): number {
  const { p, rowPtr, colIdx, values } = rows;
  let squares = 0;
  for (let k = 0; k < p; k++) {
    let s = 0;
    for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) s += values[e] * v[colIdx[e]];
    if (bias !== null) s -= bias[k];
    out[k] = s;
    squares += s * s;
  }
  return squares;
}

/** y[offset + j] += scale (A_i^T w)_t with j = cols[t] (global columns), or j = t when cols is null (support-local). */
export function csrAddTranspose(
  rows: CsrLoopRows,
  w: Float64Array,
  wOffset: number,
  scale: number,
  y: Float64Array,
  offset: number,
  cols: Int32Array | null,
): void {
  const { p, rowPtr, colIdx, values } = rows;
  for (let k = 0; k < p; k++) {
    const coef = scale * w[wOffset + k];
    if (cols !== null) for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) y[offset + cols[colIdx[e]]] += coef * values[e];
    else for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) y[offset + colIdx[e]] += coef * values[e];
  }
}
