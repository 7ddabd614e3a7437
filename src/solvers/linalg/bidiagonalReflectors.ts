/**
 * The two Householder reflectors of one step k of the bidiagonalization of a row-major q x q B
 * (Golub-Van Loan Algorithm 5.4.2), as the TypeScript loop (./typescriptFactorizations.ts) and the
 * WebAssembly passes (./wasmDenseKernels.ts) set them up: H = I - beta v v^T with H x = alpha e_1,
 * alpha = -sign(x_0) |x|, v = x - alpha e_1, beta = 1 / (|x| (|x| + |x_0|)). Each writes v (from
 * v[vAt]) and alpha into the bidiagonal and returns beta, or 0 when x = 0 (no reflection, alpha 0);
 * applying the reflector to the trailing matrix is left to the caller's kernel.
 */
import { norm2 } from '../matrix.js';

/** The left reflector of column k below the diagonal, x = B[k.., k] (|x| by scaled sum of squares): v (q - k) at vAt, d[k] = alpha. */
export function leftReflector(b: Float64Array, q: number, k: number, v: Float64Array, vAt: number, d: Float64Array): number {
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
export function rightReflector(b: Float64Array, q: number, k: number, v: Float64Array, vAt: number, e: Float64Array): number {
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
