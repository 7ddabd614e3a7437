/**
 * The machines' passes over several right-hand sides at once (a block of w vectors): one sweep over
 * each machine's data serves every column, where the single-vector passes (./gradientPass.ts,
 * ./cimminoPass.ts, ./consensusPass.ts) sweep it once per vector.
 *
 * Blocks are flat Float64Arrays, row-major n x w: entry (j, c) at j w + c, so that a row of a
 * machine's data meets the w columns' entries contiguously. The columns held are the *active* ones
 * (`setActive`): a column whose run has stopped is dropped from the block and costs nothing more.
 *  - dense: products with A_i and Q_i are matrix-matrix products (dgemm on the native backend, the
 *    TypeScript loop below otherwise): R_i = A_i X - B_i, G += A_i^T R_i for the gradient methods;
 *    W_i = Q_i^T X - R^{-T} B_i, A_i X - B_i = R^T W_i and the projection term
 *    A_i^+ (B_i - A_i X) = -Q_i W_i for the projection methods (A_i^T = Q_i R).
 *  - CSR: one pass over the rows of A_i for the w columns (row k's entries applied to w values each);
 *    the projection term solves with the Cholesky factor of G_i = A_i A_i^T column by column, with
 *    the same refinement corrections as ./csrMachine.ts.
 * The passes run on the calling thread (OpenBLAS may thread a dgemm): the block's arithmetic
 * intensity, not the engine's threads, is what several right-hand sides buy.
 */
import {
  nativeCsr,
  nativeSparse,
  type NativeCsr,
  type NativeCsrRowsHandle,
  type NativeSolverHandle,
  type NativeSparse,
} from '../linalg/backend.js';
import { selectedKernels } from '../linalg/kernels.js';
import type { CsrMachineData, MachineData, SolverSystem } from './machineData.js';
import { refinedGramSolve } from './csrMachine.js';
import { currentThreadGramSolver, type GramSolver } from './placement.js';

/** Row-major C = alpha op(A) B + beta C, op(A) m x kk (A stored kk x m when transposed), B kk x n, C m x n. */
export function gemm(
  transA: boolean,
  m: number,
  n: number,
  kk: number,
  alpha: number,
  a: Float64Array,
  lda: number,
  b: Float64Array,
  ldb: number,
  beta: number,
  c: Float64Array,
  ldc: number,
): void {
  if (m === 0 || n === 0) return;
  const blas = selectedKernels().blas;
  if (blas !== null && kk > 0) {
    blas.dgemm(transA, false, m, n, kk, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
    return;
  }
  for (let i = 0; i < m; i++) {
    const ci = i * ldc;
    if (beta === 0) c.fill(0, ci, ci + n);
    else if (beta !== 1) for (let j = 0; j < n; j++) c[ci + j] *= beta;
  }
  if (transA) {
    // C[i, :] += alpha A[l, i] B[l, :]: row l of A and of B read once.
    for (let l = 0; l < kk; l++) {
      const al = l * lda;
      const bl = l * ldb;
      for (let i = 0; i < m; i++) {
        const s = alpha * a[al + i];
        if (s === 0) continue;
        const ci = i * ldc;
        for (let j = 0; j < n; j++) c[ci + j] += s * b[bl + j];
      }
    }
    return;
  }
  for (let i = 0; i < m; i++) {
    const ai = i * lda;
    const ci = i * ldc;
    for (let l = 0; l < kk; l++) {
      const s = alpha * a[ai + l];
      if (s === 0) continue;
      const bl = l * ldb;
      for (let j = 0; j < n; j++) c[ci + j] += s * b[bl + j];
    }
  }
}

/** Row-major S = R^{-T} S in place (R p x p upper triangular, S p x w): forward substitution on w columns at once. */
function solveRTransposedBlock(r: Float64Array, p: number, s: Float64Array, w: number): void {
  const blas = selectedKernels().blas;
  if (blas !== null) {
    if (p > 0 && w > 0) blas.dtrsm(true, true, true, false, p, w, 1, r, 0, p, s, 0, w);
    return;
  }
  for (let i = 0; i < p; i++) {
    const si = i * w;
    // Row i of R^T is column i of R: R[l, i] for l <= i.
    for (let l = 0; l < i; l++) {
      const coef = r[l * p + i];
      if (coef === 0) continue;
      const sl = l * w;
      for (let j = 0; j < w; j++) s[si + j] -= coef * s[sl + j];
    }
    const d = r[i * p + i];
    for (let j = 0; j < w; j++) s[si + j] /= d;
  }
}

/**
 * The TypeScript form of the addon's csrBlockGradient: r = A X - B (p x w) with residual2[c] += |r_c|^2,
 * and g += A^T r unless g is null; each stored entry read once for the w columns.
 */
function csrBlockSweep(
  rowPtr: Int32Array,
  colIdx: Int32Array,
  values: Float64Array,
  p: number,
  w: number,
  x: Float64Array,
  b: Float64Array,
  r: Float64Array,
  g: Float64Array | null,
  residual2: Float64Array,
): void {
  for (let k = 0; k < p; k++) {
    const rk = k * w;
    for (let j = 0; j < w; j++) r[rk + j] = -b[rk + j];
    for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) {
      const v = values[e];
      const xj = colIdx[e] * w;
      for (let j = 0; j < w; j++) r[rk + j] += v * x[xj + j];
    }
    for (let j = 0; j < w; j++) residual2[j] += r[rk + j] * r[rk + j];
    if (g === null) continue;
    for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) {
      const v = values[e];
      const gj = colIdx[e] * w;
      for (let j = 0; j < w; j++) g[gj + j] += v * r[rk + j];
    }
  }
}

/** Rows `rows` of the K-column row-major block `full`, columns `active` only: p x w row-major. */
function packRows(full: Float64Array, K: number, rows: Int32Array | null, p: number, active: readonly number[], out: Float64Array): void {
  const w = active.length;
  for (let k = 0; k < p; k++) {
    const from = (rows === null ? k : rows[k]) * K;
    for (let j = 0; j < w; j++) out[k * w + j] = full[from + active[j]];
  }
}

interface BlockMachine {
  readonly p: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  /** B_i for every column (p x K row-major). */
  readonly rhs: Float64Array;
  /** B_i for the active columns (p x w). */
  packedRhs: Float64Array;
}

interface DenseBlockMachine extends BlockMachine {
  readonly storage: 'dense';
  readonly data: MachineData;
  /** R^{-T} B_i for every column (p x K), and for the active ones (p x w). */
  readonly qtx0: Float64Array;
  packedQtx0: Float64Array;
}

interface CsrBlockMachine extends BlockMachine {
  readonly storage: 'csr';
  readonly data: CsrMachineData;
  /** Row k's entries: local support columns (colIdx) and values, at rowPtr[k] .. rowPtr[k + 1]. */
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  gram: GramSolver | null;
  /** The addon's handles over the rows, with global and with support columns, when its block kernel is in use. */
  native: NativeCsrRowsHandle | null;
  nativeLocal: NativeCsrRowsHandle | null;
  /** The addon's solver with G_i's factor for blocks, else null. */
  blockSolver: NativeSolverHandle | null;
}

/** The addon's block solve with Gram factors on the native backend, else null. */
function nativeBlockSolve(): (NativeSparse & Required<Pick<NativeSparse, 'choleskySolveBlock'>>) | null {
  if (selectedKernels().backend !== 'native') return null;
  const sparse = nativeSparse();
  return sparse !== null && typeof sparse.choleskySolveBlock === 'function'
    ? (sparse as NativeSparse & Required<Pick<NativeSparse, 'choleskySolveBlock'>>)
    : null;
}

/** The addon's CSR block kernel on the native backend, else null (the TypeScript loops). */
function nativeBlockKernel(): (NativeCsr & Required<Pick<NativeCsr, 'csrBlockGradient'>>) | null {
  if (selectedKernels().backend !== 'native') return null;
  const csr = nativeCsr();
  return csr !== null && typeof csr.csrBlockGradient === 'function'
    ? (csr as NativeCsr & Required<Pick<NativeCsr, 'csrBlockGradient'>>)
    : null;
}

export type BlockPassKind = 'gradient' | 'projection';

export class BlockPass {
  readonly n: number;
  /** Right-hand sides in all (K) and the columns now in the block. */
  readonly columns: number;
  private active: number[];
  private readonly machines: (DenseBlockMachine | CsrBlockMachine)[];
  /** Work blocks sized for the largest machine at full width. */
  private readonly supportX: Float64Array;
  private readonly supportY: Float64Array;
  private readonly rowBlock: Float64Array;
  private readonly rowBlock2: Float64Array;
  private readonly rowBlock3: Float64Array;
  /** Where the native kernel's squares go when they are not wanted. */
  private readonly unusedSquares: Float64Array;
  private readonly rowVector: Float64Array;
  private readonly rowVector2: Float64Array;
  private readonly rowVector3: Float64Array;
  private readonly supportVector: Float64Array;
  private readonly csrKernel = nativeBlockKernel();
  private readonly solveKernel = nativeBlockSolve();

  /** `rhs`: K right-hand sides of length n (global row order). */
  constructor(system: SolverSystem, rhs: readonly Float64Array[], kind: BlockPassKind) {
    const K = rhs.length;
    this.n = system.n;
    this.columns = K;
    this.active = Array.from({ length: K }, (_, j) => j);
    const all = new Float64Array(system.n * K);
    for (let j = 0; j < K; j++) for (let r = 0; r < system.n; r++) all[r * K + j] = rhs[j][r];
    let largestP = 1;
    let largestC = 1;
    this.machines = system.machines.map((machine) => {
      const { p, c, full, cols } = machine;
      largestP = Math.max(largestP, p);
      largestC = Math.max(largestC, c);
      const b = new Float64Array(p * K);
      packRows(all, K, machine.rows, p, this.active, b);
      if ('q' in machine) {
        const qtx0 = b.slice();
        if (kind === 'projection') solveRTransposedBlock(machine.r, p, qtx0, K);
        return { storage: 'dense', data: machine, p, c, full, cols, rhs: b, packedRhs: b.slice(), qtx0, packedQtx0: qtx0.slice() };
      }
      // Global columns -> support positions.
      const local = new Int32Array(machine.a.colIdx.length);
      const position = new Int32Array(system.n).fill(-1);
      for (let t = 0; t < c; t++) position[cols[t]] = t;
      for (let e = 0; e < local.length; e++) local[e] = position[machine.a.colIdx[e]];
      return {
        storage: 'csr',
        data: machine,
        p,
        c,
        full,
        cols,
        rhs: b,
        packedRhs: b.slice(),
        rowPtr: machine.a.rowPtr,
        colIdx: local,
        values: machine.a.values,
        gram: kind === 'projection' ? currentThreadGramSolver(machine.gram) : null,
        native: this.csrKernel?.csrRows(p, system.n, machine.a.rowPtr, machine.a.colIdx, machine.a.values, machine.b) ?? null,
        nativeLocal:
          kind === 'projection' ? (this.csrKernel?.csrRows(p, c, machine.a.rowPtr, local, machine.a.values, machine.b) ?? null) : null,
        blockSolver:
          kind === 'projection' && this.solveKernel !== null
            ? this.solveKernel.choleskySolver(
                machine.gram.symbolic.n,
                machine.gram.symbolic.colPtr,
                machine.gram.symbolic.rowIdx,
                machine.gram.values,
                machine.gram.symbolic.ordering.perm,
              )
            : null,
      };
    });
    this.supportX = new Float64Array(largestC * K);
    this.supportY = new Float64Array(largestC * K);
    this.rowBlock = new Float64Array(largestP * K);
    this.rowBlock2 = new Float64Array(largestP * K);
    this.rowBlock3 = new Float64Array(largestP * K);
    this.unusedSquares = new Float64Array(K);
    this.rowVector = new Float64Array(largestP);
    this.rowVector2 = new Float64Array(largestP);
    this.rowVector3 = new Float64Array(largestP);
    this.supportVector = new Float64Array(largestC);
  }

  /** Width of the block: the active columns. */
  get width(): number {
    return this.active.length;
  }

  /** Machine i's column support (length c_i) and whether it is every column. */
  support(i: number): { c: number; full: boolean; cols: Int32Array } {
    return this.machines[i];
  }

  get machineCount(): number {
    return this.machines.length;
  }

  /** The columns the block holds from now on (indices into the K right-hand sides, ascending). */
  setActive(columns: readonly number[]): void {
    this.active = [...columns];
    for (const machine of this.machines) {
      packRows(machine.rhs, this.columns, null, machine.p, this.active, machine.packedRhs);
      if (machine.storage === 'dense') packRows(machine.qtx0, this.columns, null, machine.p, this.active, machine.packedQtx0);
    }
  }

  /** X on machine i's support (c x w): X itself when the support is full, else gathered. */
  private onSupport(machine: BlockMachine, x: Float64Array): Float64Array {
    if (machine.full) return x;
    const w = this.width;
    const out = this.supportX;
    for (let t = 0; t < machine.c; t++) {
      const from = machine.cols[t] * w;
      for (let j = 0; j < w; j++) out[t * w + j] = x[from + j];
    }
    return out;
  }

  /**
   * The gradient methods' pass at X: G = sum_i A_i^T (A_i X - B_i) (n x w); residual2[j] =
   * |A x_j - b_j|^2, summed in machine order.
   */
  gradient(x: Float64Array, g: Float64Array, residual2: Float64Array): void {
    const w = this.width;
    g.fill(0, 0, this.n * w);
    residual2.fill(0, 0, w);
    for (const machine of this.machines) {
      const { p, c, full, cols } = machine;
      const r = this.rowBlock;
      if (machine.storage === 'dense') {
        const rows = machine.data.a;
        r.set(machine.packedRhs.subarray(0, p * w));
        // R_i = A_i X - B_i
        gemm(false, p, w, c, 1, rows, c, this.onSupport(machine, x), w, -1, r, w);
        if (full) gemm(true, c, w, p, 1, rows, c, r, w, 1, g, w);
        else {
          const y = this.supportY;
          gemm(true, c, w, p, 1, rows, c, r, w, 0, y, w);
          for (let t = 0; t < c; t++) {
            const to = cols[t] * w;
            for (let j = 0; j < w; j++) g[to + j] += y[t * w + j];
          }
        }
        for (let k = 0; k < p * w; k++) residual2[k % w] += r[k] * r[k];
        continue;
      }
      // CSR: row k read once for the w columns: r_k = a_k X - b_k, then G += a_k^T r_k.
      if (machine.native !== null && this.csrKernel !== null)
        this.csrKernel.csrBlockGradient(machine.native, w, x, machine.packedRhs, r, g, residual2);
      else csrBlockSweep(machine.rowPtr, machine.data.a.colIdx, machine.values, p, w, x, machine.packedRhs, r, g, residual2);
    }
  }

  /**
   * The projection methods' pass at X: terms[i] (c_i x w, on machine i's support) = A_i^+ (B_i - A_i X),
   * block Cimmino's term and APC's projection; residual2[j] = |A x_j - b_j|^2, summed in machine order.
   */
  projectionTerms(x: Float64Array, terms: readonly Float64Array[], residual2: Float64Array): void {
    const w = this.width;
    residual2.fill(0, 0, w);
    this.machines.forEach((machine, i) => {
      const { p, c } = machine;
      const term = terms[i];
      if (machine.storage === 'dense') {
        const { q, r } = machine.data;
        const wi = this.rowBlock;
        // W_i = Q_i^T X - R^{-T} B_i
        wi.set(machine.packedQtx0.subarray(0, p * w));
        gemm(false, p, w, c, 1, q, c, this.onSupport(machine, x), w, -1, wi, w);
        // A_i X - B_i = R^T W_i
        const res = this.rowBlock2;
        gemm(true, p, w, p, 1, r, p, wi, w, 0, res, w);
        for (let k = 0; k < p * w; k++) residual2[k % w] += res[k] * res[k];
        gemm(true, c, w, p, -1, q, c, wi, w, 0, term, w);
        return;
      }
      this.csrProjectionTerm(machine, x, term, residual2);
    });
  }

  /** R_i = A_i X - B_i row by row, then per column y = G_i^{-1} r (refined as ./csrMachine.ts does), term = -A_i^T Y. */
  private csrProjectionTerm(machine: CsrBlockMachine, x: Float64Array, term: Float64Array, residual2: Float64Array): void {
    const w = this.width;
    const { p, c, rowPtr, colIdx, values } = machine;
    const global = machine.data.a.colIdx;
    const b = machine.packedRhs;
    const r = this.rowBlock;
    if (machine.native !== null && this.csrKernel !== null) this.csrKernel.csrBlockGradient(machine.native, w, x, b, r, null, residual2);
    else csrBlockSweep(rowPtr, global, values, p, w, x, b, r, null, residual2);
    const y = this.rowBlock2;
    const solver = machine.blockSolver;
    const local = machine.nativeLocal;
    if (solver !== null && local !== null && this.solveKernel !== null && this.csrKernel !== null) {
      // Y = G_i^{-1} R_i for the w columns in one solve, refined as solveGram does: S = A_i (A_i^T Y) - R_i, Y -= G_i^{-1} S.
      const sweep = this.csrKernel;
      y.set(r.subarray(0, p * w));
      this.solveKernel.choleskySolveBlock(solver, y, w);
      const u = this.supportY;
      const s = this.rowBlock3;
      const unused = this.unusedSquares;
      for (let step = 0; step < machine.data.gramRefinement; step++) {
        u.fill(0, 0, c * w);
        sweep.csrBlockGradient(local, w, null, b, y, u, unused);
        sweep.csrBlockGradient(local, w, u, r, s, null, unused);
        this.solveKernel.choleskySolveBlock(solver, s, w);
        for (let t = 0; t < p * w; t++) y[t] -= s[t];
      }
      // term = A_i^+ (B_i - A_i X) = -A_i^T Y
      for (let t = 0; t < p * w; t++) y[t] = -y[t];
      term.fill(0, 0, c * w);
      sweep.csrBlockGradient(local, w, null, b, y, term, unused);
      return;
    }
    const column = this.rowVector;
    const solved = this.rowVector2;
    for (let j = 0; j < w; j++) {
      for (let k = 0; k < p; k++) column[k] = r[k * w + j];
      this.solveGram(machine, column, solved);
      for (let k = 0; k < p; k++) y[k * w + j] = solved[k];
    }
    term.fill(0, 0, c * w);
    for (let k = 0; k < p; k++) {
      const yk = k * w;
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) {
        const v = values[e];
        const to = colIdx[e] * w;
        for (let j = 0; j < w; j++) term[to + j] -= v * y[yk + j];
      }
    }
  }

  /** y = G_i^{-1} r with the machine's refinement corrections (./csrMachine.ts). */
  private solveGram(machine: CsrBlockMachine, r: Float64Array, y: Float64Array): void {
    refinedGramSolve(machine.gram as GramSolver, machine, machine.data.gramRefinement, r, y, this.supportVector, this.rowVector3);
  }

  /** out (n x w) = sum_i terms[i] scattered from the supports, in machine order. */
  sumTerms(terms: readonly Float64Array[], out: Float64Array): void {
    const w = this.width;
    out.fill(0, 0, this.n * w);
    this.machines.forEach(({ c, full, cols }, i) => {
      const term = terms[i];
      if (full) for (let t = 0; t < c * w; t++) out[t] += term[t];
      else
        for (let t = 0; t < c; t++) {
          const to = cols[t] * w;
          for (let j = 0; j < w; j++) out[to + j] += term[t * w + j];
        }
    });
  }
}
