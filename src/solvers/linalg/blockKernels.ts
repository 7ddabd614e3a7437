/**
 * The block kernels of the passes over several right-hand sides (../machines/blockShard.ts): a dense
 * product of a matrix with a row-major block of w columns (n x w, entry (j, c) at j w + c), and the CSR
 * block sweep over w columns, and solves with a sparse Cholesky factor on w columns; and APC's and MLM's
 * bookkeeping after a pass (BlockConsensus: the TypeScript loop, or WebAssembly's on an arena). Three implementations,
 * one arithmetic each: the TypeScript loops (below; the product is ./typescriptDenseKernels.ts's gemm),
 * the WebAssembly SIMD ones (./wasm/rowKernels.wat blockProduct and csrBlockGradient, on a run's arena:
 * ./wasmRowKernels.ts) and the native addon's (dgemm, or the one-sweep rowsFusedBlock of native/src/row_kernels.c
 * with dtrmm for a whole dense pass; csrBlockGradient of native/src/csr_kernels.c;
 * CHOLMOD's block solve). The CSR sweeps add the same products in the same order on all three (the
 * same bits), the TypeScript and WebAssembly Cholesky solves do on each column what ../sparse/sparseCholesky.ts
 * solveCholesky does to one vector (the same bits); the dense
 * products differ in their order of summation, so agree to rounding. Which one a thread uses is decided
 * by ../machines/placement.ts (PassKernels.blockProduct, denseBlockTerm, csrBlock).
 */
import type { NativeBlas, NativeBlockStep, NativeCsr, NativeSparse } from './backend.js';
import type { DenseKernels } from './denseKernels.js';

/**
 * Row-major C = alpha op(A) X + beta C (beta 0: C is not read), op(A) m x kk (A stored kk x m when
 * transposed, lda its row length), X kk x n, C m x n, each from its array's start: the dense kernels'
 * gemm (its TypeScript loop is the reference the WebAssembly tiles are tested against).
 */
export type BlockProduct = DenseKernels['gemm'];

/**
 * A dense machine's block pass in one sweep over its rows (p x c, `rows`): D = rows X - rhs (p x w, into `dots`),
 * term = scale rows^T D (c x w, overwritten); with R (p x p upper triangular) also residual = R^T D (p x w).
 */
export type DenseBlockTerm = (
  p: number,
  c: number,
  w: number,
  scale: number,
  rows: Float64Array,
  x: Float64Array,
  rhs: Float64Array,
  r: Float64Array | null,
  dots: Float64Array,
  residual: Float64Array,
  term: Float64Array,
) => void;

/** The addon's (rowsFusedBlock: each row of the machine read once, where two dgemm read it twice; dtrmm), or null without them. */
export function nativeDenseBlockTerm(blas: NativeBlas | null): DenseBlockTerm | null {
  if (blas === null || typeof blas.rowsFusedBlock !== 'function' || typeof blas.dtrmm !== 'function') return null;
  const fused = blas.rowsFusedBlock.bind(blas);
  const trmm = blas.dtrmm.bind(blas);
  return (p, c, w, scale, rows, x, rhs, r, dots, residual, term) => {
    term.fill(0, 0, c * w);
    fused(p, c, w, scale, rows, c, x, rhs, dots, term);
    if (r === null || w === 0) return;
    residual.set(dots.subarray(0, p * w));
    trmm(true, true, p, w, 1, r, p, residual, w);
  };
}

/** A chunk of CSR rows (p x c, column indices below c) without a right-hand side: the block sweep takes B per call. */
export interface CsrBlockRows {
  readonly p: number;
  readonly c: number;
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/** The block sweep bound to one chunk of rows. */
export interface CsrBlockKernel {
  /**
   * Over w columns: R = A X - B (p x w) and residual2[j] += |R_j|^2, then G += A^T R (c x w) unless G is
   * null; each stored entry read once for the w columns. X null: G += A^T R alone, R given (B unused).
   */
  run(w: number, x: Float64Array | null, b: Float64Array, r: Float64Array, g: Float64Array | null, residual2: Float64Array): void;
  /**
   * The gradient methods' term: G = A^T (A X - B) (c x w, overwritten) and residual2[j] += |R_j|^2, run's
   * sums on a zeroed G to the bit; R (p x w) is scratch, which the addon's fused sweep leaves unwritten.
   */
  term(w: number, x: Float64Array, b: Float64Array, r: Float64Array, g: Float64Array, residual2: Float64Array): void;
}

/** `term` from a sweep's `run`: G zeroed, then G += A^T (A X - B). */
export function withTerm(c: number, run: CsrBlockKernel['run']): CsrBlockKernel {
  return {
    run,
    term(w, x, b, r, g, residual2) {
      g.fill(0, 0, c * w);
      run(w, x, b, r, g, residual2);
    },
  };
}

/** The TypeScript sweep (the reference the WebAssembly and native ones reproduce to the bit). */
export function typescriptCsrBlock(rows: CsrBlockRows): CsrBlockKernel {
  const { p, c, rowPtr, colIdx, values } = rows;
  return withTerm(c, (w, x, b, r, g, residual2) => {
    for (let k = 0; k < p; k++) {
      const rk = k * w;
      if (x !== null) {
        for (let j = 0; j < w; j++) r[rk + j] = -b[rk + j];
        for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) {
          const v = values[e];
          const xj = colIdx[e] * w;
          for (let j = 0; j < w; j++) r[rk + j] += v * x[xj + j];
        }
        for (let j = 0; j < w; j++) residual2[j] += r[rk + j] * r[rk + j];
      }
      if (g === null) continue;
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) {
        const v = values[e];
        const gj = colIdx[e] * w;
        for (let j = 0; j < w; j++) g[gj + j] += v * r[rk + j];
      }
    }
  });
}

/**
 * APC's and MLM's bookkeeping of one machine after its block pass (../machines/blockShard.ts, CONSENSUS_PHASE): on its c
 * support rows of X and y (n x w row-major blocks from their arrays' starts: row first + t when first >= 0, else
 * cols[t]), with e = X - y, near[j] = sum_t (e_tj - D_tj)^2 and, unless `inside` is null, inside[j] = sum_t e_tj^2
 * (both overwritten, w entries); then D += gamma (term - D) (D and term c x w). The TypeScript loop below, or the
 * WebAssembly one on a run's arena (./wasmRowKernels.ts): the same operations on every entry, in the same order.
 */
export type BlockConsensus = (
  c: number,
  w: number,
  x: Float64Array,
  y: Float64Array,
  first: number,
  cols: Int32Array,
  d: Float64Array,
  term: Float64Array,
  gamma: number,
  near: Float64Array,
  inside: Float64Array | null,
) => void;

/** The TypeScript BlockConsensus (the reference the WebAssembly one reproduces to the bit). */
export const blockConsensusLoop: BlockConsensus = (c, w, x, y, first, cols, d, term, gamma, near, inside) => {
  near.fill(0, 0, w);
  inside?.fill(0, 0, w);
  for (let t = 0; t < c; t++) {
    const from = (first >= 0 ? first + t : cols[t]) * w;
    const tw = t * w;
    for (let j = 0; j < w; j++) {
      const e = x[from + j] - y[from + j];
      if (inside !== null) inside[j] += e * e;
      const f = e - d[tw + j];
      near[j] += f * f;
      d[tw + j] += gamma * (term[tw + j] - d[tw + j]);
    }
  }
};

/** A sparse Cholesky factor G = P^T L L^T P as ../sparse/sparseCholesky.ts keeps it: L by columns, the diagonal first. */
export interface CholeskyBlockFactor {
  readonly n: number;
  readonly colPtr: Int32Array;
  readonly rowIdx: Int32Array;
  readonly values: Float64Array;
  /** perm[k]: the row of G at position k. */
  readonly perm: Int32Array;
}

/** Solves with one factor on blocks. */
export interface GramBlockSolver {
  /** B (n x w, row-major) = G^{-1} B in place. */
  solve(b: Float64Array, w: number): void;
}

/** Entries of a block solve's work space for n x w blocks: P B, and the backward sweep's four partial sums of a row. */
export function gramBlockWorkLength(n: number, w: number): number {
  return (n + 4) * w;
}

/**
 * The TypeScript block solve: solveCholesky's operations on each of the w columns, in its order,
 * each entry of L read once for them; `work` (gramBlockWorkLength entries) holds P B and the backward sweep's sums.
 */
export function typescriptGramBlockSolver(factor: CholeskyBlockFactor, work: Float64Array): GramBlockSolver {
  const { n, colPtr, rowIdx, values, perm } = factor;
  return {
    solve(b, w) {
      const z = work;
      const sums = n * w;
      for (let k = 0; k < n; k++) z.set(b.subarray(perm[k] * w, perm[k] * w + w), k * w);
      for (let j = 0; j < n; j++) {
        const zj = j * w;
        const d = values[colPtr[j]];
        for (let t = 0; t < w; t++) z[zj + t] /= d;
        for (let q = colPtr[j] + 1; q < colPtr[j + 1]; q++) {
          const l = values[q];
          const zr = rowIdx[q] * w;
          for (let t = 0; t < w; t++) z[zr + t] -= l * z[zj + t];
        }
      }
      // Each column's sum as ../sparse/sparseCholesky.ts backwardSweep adds it: the column's entries four at a time
      // into the four partial sums (rows of w at `sums`), the rest into the first.
      const [s0, s1, s2, s3] = [sums, sums + w, sums + 2 * w, sums + 3 * w];
      for (let j = n - 1; j >= 0; j--) {
        const zj = j * w;
        z.fill(0, sums, sums + 4 * w);
        const end = colPtr[j + 1];
        let q = colPtr[j] + 1;
        for (; q + 4 <= end; q += 4) {
          const [l0, l1, l2, l3] = [values[q], values[q + 1], values[q + 2], values[q + 3]];
          const [z0, z1, z2, z3] = [rowIdx[q] * w, rowIdx[q + 1] * w, rowIdx[q + 2] * w, rowIdx[q + 3] * w];
          for (let t = 0; t < w; t++) {
            z[s0 + t] += l0 * z[z0 + t];
            z[s1 + t] += l1 * z[z1 + t];
            z[s2 + t] += l2 * z[z2 + t];
            z[s3 + t] += l3 * z[z3 + t];
          }
        }
        for (; q < end; q++) {
          const l = values[q];
          const zr = rowIdx[q] * w;
          for (let t = 0; t < w; t++) z[s0 + t] += l * z[zr + t];
        }
        const d = values[colPtr[j]];
        for (let t = 0; t < w; t++) z[zj + t] = (z[zj + t] - (z[s0 + t] + z[s1 + t] + (z[s2 + t] + z[s3 + t]))) / d;
      }
      for (let k = 0; k < n; k++) b.set(z.subarray(k * w, k * w + w), perm[k] * w);
    },
  };
}

type NativeBlockCsr = NativeCsr & Required<Pick<NativeCsr, 'csrBlockGradient'>>;

/** CHOLMOD's block solve on a factor (the addon's sparse part, built with choleskySolveBlock), else null. */
export function nativeGramBlockSolver(sparse: NativeSparse | null, factor: CholeskyBlockFactor): GramBlockSolver | null {
  if (sparse === null || typeof sparse.choleskySolveBlock !== 'function') return null;
  const solveBlock = sparse.choleskySolveBlock.bind(sparse);
  const handle = sparse.choleskySolver(factor.n, factor.colPtr, factor.rowIdx, factor.values, factor.perm);
  return {
    solve(b, w) {
      if (w > 0) solveBlock(handle, b, w);
    },
  };
}

/** The addon's sweep when it has one (an addon built before it lacks csrBlockGradient), else null; its term fused when it has csrBlockTerm. */
export function nativeCsrBlock(csr: NativeCsr | null, rows: CsrBlockRows): CsrBlockKernel | null {
  if (csr === null || typeof csr.csrBlockGradient !== 'function') return null;
  const native = csr as NativeBlockCsr;
  const { p, c, rowPtr, colIdx, values } = rows;
  const handle = native.csrRows(p, c, rowPtr, colIdx, values, new Float64Array(p));
  const run: CsrBlockKernel['run'] = (w, x, b, r, g, residual2) => native.csrBlockGradient(handle, w, x, b, r, g, residual2);
  if (typeof native.csrBlockTerm !== 'function') return withTerm(c, run);
  const fused = native as NativeBlockCsr & Required<Pick<NativeCsr, 'csrBlockTerm'>>;
  return { run, term: (w, x, b, _r, g, residual2) => fused.csrBlockTerm(handle, w, x, b, g, residual2) };
}

/** The block methods' step on rows [first, end) (the addon's, ../linalg/backend.ts NativeBlockStep.blockStep, bound to a layout). */
export interface BlockStepKernel {
  run(...args: Parameters<NativeBlockStep['blockStep']> extends [unknown, ...infer Rest] ? Rest : never): void;
}

/** The addon's block step over the machines' supports (see NativeBlockStep.blockStepLayout), or null without it. */
export function nativeBlockStepKernel(
  step: NativeBlockStep | null,
  n: number,
  K: number,
  strip: Int32Array,
  cols: Int32Array,
  colsOffset: Int32Array,
): BlockStepKernel | null {
  if (step === null) return null;
  const layout = step.blockStepLayout(n, K, strip, cols, colsOffset);
  return {
    run(rule, alpha, beta, w, first, end, input, output, summed) {
      step.blockStep(layout, rule, alpha, beta, w, first, end, input, output, summed);
    },
  };
}
