/**
 * The dense kernels (./denseKernels.ts) on the addon's OpenBLAS + LAPACK: thin wrappers, one BLAS or
 * LAPACK call each, or LAPACK's blocked factorizations driven panel by panel (./panelFactorizations.ts)
 * where a single call would hold the thread. Row-major storage is the column-major transpose, so the
 * factorizations of A_i^T run on A_i's rows as they are. A call too small to pay for the addon's
 * entry goes to the TypeScript loop (./typescriptDenseKernels.ts); the thresholds are below.
 */
import { runSync } from '../cooperative.js';
import { NATIVE_MADDS_PER_CALL, type NativeBlas } from './backend.js';
import { projectionRows, type DenseKernels } from './denseKernels.js';
import { panelBidiagonalWork, panelFormQWork, panelHouseholderFactorWork, panelLuWork, panelQrWork } from './panelFactorizations.js';
import {
  addBlockAndTransposeProduct,
  combineRowBlock,
  combineRows,
  multiplyByTransposeRowsLoop,
  norm,
  plainKrylovStorage,
  projectOut,
  recurrenceStep,
  scaledCopy,
  TYPESCRIPT_DENSE_KERNELS,
} from './typescriptDenseKernels.js';

/** Below this many multiply-adds the call into the addon costs more than the loop (C = X Y^T). */
const NATIVE_MIN_MADDS = 4096;
/** Smallest Gram block (entries) whose products go to dgemv. */
const NATIVE_MIN_BLOCK = 1024;
/** Below this length the call into the addon costs more than the TypeScript loop over a Lanczos basis. */
const NATIVE_MIN_SIZE = 64;
/** Largest n bidiagonalized in one dgebrd call by bidiagonalOfSquare (at n = 120 ~2.5x faster than the sliced panels). */
const SINGLE_CALL_MAX_N = 512;
/**
 * Fraction of nonzero entries from which LU is LAPACK's dense factorization. Below it the envelope
 * LU is at least as fast (sherman5, 0.2 % nonzero but bandwidth 1106: ~0.6 s either way), and banded
 * matrices (olm1000: bandwidth 3) factor in O(n), where any dense factorization costs n^3 / 3.
 */
const NATIVE_MIN_DENSITY = 0.05;

export function nativeDenseKernelsOf(blas: NativeBlas): DenseKernels {
  const kernels: DenseKernels = {
    backend: 'native',
    multiplyByTransposeRows(x, y, len, rowStart, rowEnd, cols, out, outStride, outRowOffset = 0) {
      if ((rowEnd - rowStart) * cols * len < NATIVE_MIN_MADDS) {
        multiplyByTransposeRowsLoop(x, y, len, rowStart, rowEnd, cols, out, outStride, outRowOffset);
        return;
      }
      blas.dgemm(
        false,
        true,
        rowEnd - rowStart,
        cols,
        len,
        1,
        x,
        rowStart * len,
        len,
        y,
        0,
        len,
        0,
        out,
        (rowStart - outRowOffset) * outStride,
        outStride,
      );
    },
    // As many rows as one call of NATIVE_MADDS_PER_CALL multiply-adds holds.
    productRows: (maddsPerRow) => Math.max(1, Math.floor(NATIVE_MADDS_PER_CALL / Math.max(1, maddsPerRow))),
    gemm(transA, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc) {
      if (m === 0 || n === 0) return;
      if (kk === 0) TYPESCRIPT_DENSE_KERNELS.gemm(transA, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc);
      // One column of contiguous vectors: dgemv, which reads op(A) once where dgemm packs it first (a 400 x 4000 A_i:
      // ~3x the time).
      else if (n === 1 && ldb === 1 && ldc === 1) blas.dgemv(transA, transA ? kk : m, transA ? m : kk, alpha, a, 0, lda, b, 0, beta, c, 0);
      else blas.dgemm(transA, false, m, n, kk, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
    },
    subtractProductRows(c, q, w, k, len, rowStart, rowEnd) {
      blas.dgemm(false, false, rowEnd - rowStart, len, k, -1, c, rowStart * k, k, q, 0, len, 1, w, rowStart * len, len);
    },
    normalProduct(m, rows, cols, x, y, t) {
      blas.dgemv(false, rows, cols, 1, m, 0, cols, x, 0, 0, t, 0);
      blas.dgemv(true, rows, cols, 1, m, 0, cols, t, 0, 0, y, 0);
    },
    addBlockAndTransposeProduct(g, start, pi, pj, x, oi, oj, y) {
      if (pi * pj < NATIVE_MIN_BLOCK) {
        addBlockAndTransposeProduct(g, start, pi, pj, x, oi, oj, y);
        return;
      }
      blas.dgemv(false, pi, pj, 1, g, start, pj, x, oj, 1, y, oi);
      blas.dgemv(true, pi, pj, 1, g, start, pj, x, oi, 1, y, oj);
    },
    krylovStorage: plainKrylovStorage,
    // O(n) passes, as fast in the loops as through the addon's entry.
    recurrenceStep,
    norm,
    scaledCopy,
    projectOut(basis, n, count, w, h, skipBelow = 0) {
      if (n < NATIVE_MIN_SIZE) return projectOut(basis, n, count, w, h, skipBelow);
      blas.dgemv(false, count, n, 1, basis, 0, n, w, 0, 0, h, 0);
      const { first, end, all } = projectionRows(h, count, skipBelow);
      if (end > first) blas.dgemv(true, end - first, n, -1, basis, first * n, n, h, first, 1, w, 0);
      return all;
    },
    combineRows(basis, n, count, h, y) {
      if (n < NATIVE_MIN_SIZE) combineRows(basis, n, count, h, y);
      else blas.dgemv(true, count, n, 1, basis, 0, n, h, 0, 0, y, 0);
    },
    combineRowBlock(k, kept, size, basis, n, r0, len, out) {
      if (n < NATIVE_MIN_SIZE) combineRowBlock(k, kept, size, basis, n, r0, len, out);
      else blas.dgemm(false, false, kept, len, size, 1, k, 0, size, basis, r0, n, 0, out, 0, len);
    },
    solveRTransposedBlock(r, p, s, w) {
      if (p > 0 && w > 0) blas.dtrsm(true, true, true, false, p, w, 1, r, 0, p, s, 0, w);
    },
    solveRBlock(r, p, s, w) {
      if (p > 0 && w > 0) blas.dtrsm(true, true, false, false, p, w, 1, r, 0, p, s, 0, w);
    },
    *thinQrWork(w, p, c) {
      // LAPACK leaves a column that is already zero below the diagonal unreflected, where the TypeScript
      // loop reflects it: the two may differ in the signs of matching rows of q and r (Q Q^T and R^T R agree).
      const { q, r } = yield* panelQrWork(blas, w, p, c, true);
      return { q: q!, r };
    },
    householderFactorWork: (w, p, c) => panelHouseholderFactorWork(blas, w, p, c),
    formQWork: (reflectors) => panelFormQWork(blas, reflectors),
    orthonormalizeRows(a, row, p, n, tau) {
      blas.dgeqrf(n, p, a, row * n, n, tau, 0);
      blas.dorgqr(n, p, p, a, row * n, n, tau, 0);
    },
    *bidiagonalOfColumnsWork(columns, p, c) {
      // Square: no QR needed (the singular values of the transpose are the same).
      if (p === c) return yield* panelBidiagonalWork(blas, columns, p);
      const { r } = yield* panelQrWork(blas, columns, p, c, false);
      return yield* panelBidiagonalWork(blas, r, p);
    },
    bidiagonalOfSquare(matrix, n, d, e) {
      if (n <= SINGLE_CALL_MAX_N) {
        blas.dgebrd(n, n, matrix, 0, n, d, 0, e, 0);
        return;
      }
      const bidiagonal = runSync(panelBidiagonalWork(blas, matrix, n));
      d.set(bidiagonal.d);
      e.set(bidiagonal.e);
    },
    *luWork(lu, n) {
      let nonzeros = 0;
      for (let i = 0; i < n; i++) {
        const off = i * n;
        for (let j = 0; j < n; j++) if (lu[off + j] !== 0) nonzeros++;
        if ((i & 127) === 127) yield undefined;
      }
      if (nonzeros < NATIVE_MIN_DENSITY * n * n) return yield* TYPESCRIPT_DENSE_KERNELS.luWork(lu, n);
      const { perm, zeroPivotColumn } = yield* panelLuWork(blas, lu, n);
      const lowerStart = new Int32Array(n);
      const upperEnd = new Int32Array(n).fill(n);
      return { n, lu, perm, lowerStart, upperEnd, zeroPivotColumn, factoredBy: 'native', solvesWith: kernels };
    },
    luSolveInPlace(f, y) {
      blas.dtrsv(false, false, true, f.n, f.lu, 0, f.n, y, 0);
      blas.dtrsv(true, false, false, f.n, f.lu, 0, f.n, y, 0);
    },
    luSolveTransposedInPlace(f, z) {
      blas.dtrsv(true, true, false, f.n, f.lu, 0, f.n, z, 0);
      blas.dtrsv(false, true, true, f.n, f.lu, 0, f.n, z, 0);
    },
  };
  return kernels;
}
