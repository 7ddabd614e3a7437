/**
 * The Householder bidiagonalization of a row-major q x q B (Golub-Van Loan Algorithm 5.4.2) but for its
 * trailing updates: the steps, their two reflectors and the yields, for the TypeScript loop
 * (./typescriptFactorizations.ts) and the WebAssembly passes (./wasmDenseKernels.ts), which supply the
 * updates on their own kernels. Each reflector is H = I - beta v v^T with H x = alpha e_1,
 * alpha = -sign(x_0) |x|, v = x - alpha e_1, beta = 1 / (|x| (|x| + |x_0|)); it writes v (from v[vAt])
 * and alpha into the bidiagonal and returns beta, or 0 when x = 0 (no reflection, alpha 0).
 */
import type { Work } from '../cooperative.js';
import { norm2 } from '../matrix.js';
import type { Bidiagonal } from './denseKernels.js';

/** A backend's side of the bidiagonalization: where B and v live, and the trailing updates of step k. */
export interface BidiagonalUpdates {
  /** B as the updates leave it, where the reflectors read their column and row. */
  readonly b: Float64Array;
  /** Where the reflectors write v: the left one's q - k entries from leftAt(k), the right one's q - k - 1 from rightAt(k). */
  readonly v: Float64Array;
  leftAt(k: number): number;
  rightAt(k: number): number;
  /** B[k.., k+1..] -= beta v (v^T B[k.., k+1..]). */
  left(k: number, beta: number): void;
  /** B[k+1.., k+1..] -= beta (B[k+1.., k+1..] v) v^T. */
  right(k: number, beta: number): void;
}

/** Upper bidiagonal form (d, e) of the q x q B held by `updates`, yielding after about `maddsPerYield` multiply-adds of updates. */
export function* householderBidiagonalWork(q: number, updates: BidiagonalUpdates, maddsPerYield: number): Work<Bidiagonal> {
  const { b, v } = updates;
  const d = new Float64Array(q);
  const e = new Float64Array(Math.max(q - 1, 0));
  let pending = 0;
  for (let k = 0; k < q; k++) {
    // Left reflector zeroing B[k+1.., k].
    const beta = leftReflector(b, q, k, v, updates.leftAt(k), d);
    if (beta !== 0 && k + 1 < q) updates.left(k, beta);
    if (k + 1 >= q) break;
    // Right reflector zeroing B[k, k+2..].
    const betaR = rightReflector(b, q, k, v, updates.rightAt(k), e);
    if (betaR !== 0) updates.right(k, betaR);
    // Each update is about 2 (q - k)^2 multiply-adds.
    pending += 4 * (q - k) * (q - k);
    if (pending >= maddsPerYield) {
      pending = 0;
      yield undefined;
    }
  }
  return { d, e };
}

/** The left reflector of column k below the diagonal, x = B[k.., k] (|x| by scaled sum of squares): v (q - k) at vAt, d[k] = alpha. */
function leftReflector(b: Float64Array, q: number, k: number, v: Float64Array, vAt: number, d: Float64Array): number {
  let scale = 0;
  for (let i = k; i < q; i++) scale = Math.max(scale, Math.abs(b[i * q + k]));
  if (scale === 0) {
    d[k] = 0;
    return 0;
  }
  let ss = 0;
  for (let i = k; i < q; i++) {
    const x = b[i * q + k];
    const t = x / scale;
    v[vAt + i - k] = x;
    ss += t * t;
  }
  const sigma = scale * Math.sqrt(ss);
  const x0 = v[vAt];
  const alpha = x0 >= 0 ? -sigma : sigma;
  v[vAt] = x0 - alpha;
  d[k] = alpha;
  return 1 / (sigma * (sigma + Math.abs(x0)));
}

/** The right reflector of row k right of the superdiagonal, x = B[k, k+1..] (|x| by norm2): v (q - k - 1) at vAt, e[k] = alpha. */
function rightReflector(b: Float64Array, q: number, k: number, v: Float64Array, vAt: number, e: Float64Array): number {
  const rk = k * q;
  const sigma = norm2(b, rk + k + 1, q - k - 1);
  if (sigma === 0) {
    e[k] = 0;
    return 0;
  }
  const y0 = b[rk + k + 1];
  const alpha = y0 >= 0 ? -sigma : sigma;
  for (let j = k + 1; j < q; j++) v[vAt + j - k - 1] = b[rk + j];
  v[vAt] = y0 - alpha;
  e[k] = alpha;
  return 1 / (sigma * (sigma + Math.abs(y0)));
}
