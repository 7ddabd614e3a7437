/**
 * A thread's runner of the block passes (see ./blockPass.ts and ../parallel/engine.ts): chunk i is
 * machine i, and the phase is the block's width w (the active columns). Every thread sweeps the
 * machines it takes for the w columns at once and writes only machine i's region of the output
 * (its term, c_i x w on its support) and its w scalars (|A_i x_j - b_j|^2 per column); the calling
 * thread sums them in machine order, so the iterates never depend on the thread count.
 *
 * The engine's input holds X (n x w, row-major, in the first n K entries) and then, machine after
 * machine, the right-hand sides each machine's pass reads for the active columns (p_i x w): B_i, or
 * R_i^{-T} B_i for the dense projection passes. The calling thread writes those once per retirement.
 *  - dense: products with A_i and Q_i are matrix-matrix products (the dense kernels' gemm: dgemm on the
 *    native backend, the TypeScript loop otherwise): R_i = A_i X - B_i, term A_i^T R_i for the gradient methods;
 *    W_i = Q_i^T X - R^{-T} B_i, A_i X - B_i = R^T W_i and the projection term
 *    A_i^+ (B_i - A_i X) = -Q_i W_i for the projection methods (A_i^T = Q_i R).
 *  - CSR: one pass over the rows of A_i for the w columns (row k's entries applied to w values each);
 *    the projection term solves with the Cholesky factor of G_i = A_i A_i^T (every column at once on
 *    the native backend, else column by column), with the same refinement corrections as ./csrMachine.ts.
 */
import {
  nativeCsr,
  nativeSparse,
  type NativeCsr,
  type NativeCsrRowsHandle,
  type NativeSolverHandle,
  type NativeSparse,
} from '../linalg/backend.js';
import type { DenseKernels } from '../linalg/denseKernels.js';
import { kernelsOf } from '../linalg/kernels.js';
import type { Shard, ShardFactory, ThreadContext } from '../parallel/protocol.js';
import { refinedGramSolve } from './csrMachine.js';
import { passKernels, type GramSolver } from './placement.js';
import type { CsrMachineStorage } from './storage.js';

export type BlockPassKind = 'gradient' | 'projection';

export interface DenseBlockStorage {
  readonly storage: 'dense';
  readonly p: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  /** The rows of A_i on the support (p x c) for the gradient pass; Q_i^T (p x c) and R (p x p) for the projection pass. */
  readonly a: Float64Array | null;
  readonly q: Float64Array | null;
  readonly r: Float64Array | null;
}

/** A CSR machine's rows on its support (column indices local to it) and, for the projection pass, G_i's factor. */
export type CsrBlockStorage = Omit<CsrMachineStorage, 'b'>;

export type BlockStorage = DenseBlockStorage | CsrBlockStorage;

/** What every thread of a block run reads. */
export interface BlockSpec {
  readonly kind: BlockPassKind;
  /** The system's n and the right-hand sides in all (K). */
  readonly n: number;
  readonly columns: number;
  readonly machines: readonly BlockStorage[];
  /** Machine i's right-hand sides start at input[n K + rowOffset[i] w] (length m + 1). */
  readonly rowOffset: Int32Array;
  /** Machine i's term starts at output[outputOffset[i]] (c_i K long; length m + 1). */
  readonly outputOffset: Int32Array;
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

/** cols[0] when the support is consecutive columns (a strip, as a banded matrix's machines have), else -1. */
export function stripStart(cols: Int32Array): number {
  const c = cols.length;
  return c > 0 && cols[c - 1] - cols[0] === c - 1 ? cols[0] : -1;
}

/** A CSR machine as this thread runs it: the addon's handles when its block kernels are in use, else its Gram solver. */
interface CsrBlockMachine {
  readonly storage: CsrBlockStorage;
  readonly rows: NativeCsrRowsHandle | null;
  readonly blockSolver: NativeSolverHandle | null;
  readonly gram: GramSolver | null;
}

type NativeBlockCsr = NativeCsr & Required<Pick<NativeCsr, 'csrBlockGradient'>>;
type NativeBlockSparse = NativeSparse & Required<Pick<NativeSparse, 'choleskySolveBlock'>>;

/** The addon's CSR block kernel on the native backend, else null (the TypeScript loops). */
function nativeBlockKernel(context: ThreadContext): NativeBlockCsr | null {
  if (context.backend !== 'native') return null;
  const csr = nativeCsr();
  return csr !== null && typeof csr.csrBlockGradient === 'function' ? (csr as NativeBlockCsr) : null;
}

/** The addon's block solve with Gram factors on the native backend, else null. */
function nativeBlockSolve(context: ThreadContext): NativeBlockSparse | null {
  if (context.backend !== 'native') return null;
  const sparse = nativeSparse();
  return sparse !== null && typeof sparse.choleskySolveBlock === 'function' ? (sparse as NativeBlockSparse) : null;
}

export class BlockShard implements Shard {
  private readonly spec: BlockSpec;
  private readonly csr: (CsrBlockMachine | null)[];
  private readonly csrKernel: NativeBlockCsr | null;
  private readonly solveKernel: NativeBlockSparse | null;
  /** The addon's BLAS on the native backend (dgemm), else null (the TypeScript loops). */
  private readonly denseKernels: DenseKernels;
  /** This thread's work blocks, sized for the largest machine at full width. */
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

  constructor(spec: BlockSpec, context: ThreadContext) {
    this.spec = spec;
    const K = spec.columns;
    const projection = spec.kind === 'projection';
    this.denseKernels = kernelsOf(context.backend).dense;
    this.csrKernel = nativeBlockKernel(context);
    this.solveKernel = projection ? nativeBlockSolve(context) : null;
    const kernels = passKernels(context);
    let largestP = 1;
    let largestC = 1;
    this.csr = spec.machines.map((storage) => {
      largestP = Math.max(largestP, storage.p);
      largestC = Math.max(largestC, storage.c);
      if (storage.storage === 'dense') return null;
      const { p, c, rowPtr, colIdx, values, gram } = storage;
      const solveKernel = this.solveKernel;
      return {
        storage,
        rows: this.csrKernel?.csrRows(p, c, rowPtr, colIdx, values, new Float64Array(p)) ?? null,
        blockSolver:
          gram !== null && solveKernel !== null
            ? solveKernel.choleskySolver(
                gram.symbolic.n,
                gram.symbolic.colPtr,
                gram.symbolic.rowIdx,
                gram.values,
                gram.symbolic.ordering.perm,
              )
            : null,
        gram: gram !== null && (solveKernel === null || this.csrKernel === null) ? kernels.gramSolver(gram) : null,
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

  /** Phase w: machine `chunk`'s pass over the w active columns. */
  run(w: number, chunk: number, input: Float64Array, output: Float64Array, scalars: Float64Array): void {
    const { n, columns: K, kind, rowOffset, outputOffset } = this.spec;
    const storage = this.spec.machines[chunk];
    const { p, c } = storage;
    const x = input.subarray(0, n * w);
    const from = n * K + rowOffset[chunk] * w;
    const rhs = input.subarray(from, from + p * w);
    const term = output.subarray(outputOffset[chunk], outputOffset[chunk] + c * w);
    const residual2 = scalars.subarray(chunk * K, chunk * K + w);
    residual2.fill(0);
    const onSupport = this.onSupport(storage, x, w);
    if (storage.storage === 'dense') {
      this.dense(storage, onSupport, rhs, term, residual2, w);
      return;
    }
    const machine = this.csr[chunk] as CsrBlockMachine;
    if (kind === 'gradient') {
      term.fill(0);
      if (machine.rows !== null && this.csrKernel !== null)
        this.csrKernel.csrBlockGradient(machine.rows, w, onSupport, rhs, this.rowBlock, term, residual2);
      else csrBlockSweep(storage.rowPtr, storage.colIdx, storage.values, p, w, onSupport, rhs, this.rowBlock, term, residual2);
      return;
    }
    this.csrProjection(machine, onSupport, rhs, term, residual2, w);
  }

  /** X on the machine's support (c x w): X itself when the support is full, its rows when a strip, else gathered. */
  private onSupport(storage: BlockStorage, x: Float64Array, w: number): Float64Array {
    if (storage.full) return x;
    const { c, cols } = storage;
    const first = stripStart(cols);
    if (first >= 0) return x.subarray(first * w, (first + c) * w);
    const out = this.supportX;
    for (let t = 0; t < c; t++) {
      const from = cols[t] * w;
      for (let j = 0; j < w; j++) out[t * w + j] = x[from + j];
    }
    return out.subarray(0, c * w);
  }

  /**
   * Gradient pass (A_i given): R_i = A_i X - B_i, term = A_i^T R_i. Projection pass (Q_i, R given,
   * `rhs` = R^{-T} B_i): W_i = Q_i^T X - R^{-T} B_i, A_i X - B_i = R^T W_i, term = -Q_i W_i.
   */
  private dense(
    storage: DenseBlockStorage,
    x: Float64Array,
    rhs: Float64Array,
    term: Float64Array,
    residual2: Float64Array,
    w: number,
  ): void {
    const { p, c } = storage;
    const gradient = storage.a !== null;
    const rows = (storage.a ?? storage.q) as Float64Array;
    const first = this.rowBlock;
    first.set(rhs);
    this.denseKernels.gemm(false, p, w, c, 1, rows, c, x, w, -1, first, w);
    let residual = first;
    if (!gradient) {
      residual = this.rowBlock2;
      this.denseKernels.gemm(true, p, w, p, 1, storage.r as Float64Array, p, first, w, 0, residual, w);
    }
    for (let k = 0; k < p * w; k++) residual2[k % w] += residual[k] * residual[k];
    this.denseKernels.gemm(true, c, w, p, gradient ? 1 : -1, rows, c, first, w, 0, term, w);
  }

  /** R_i = A_i X - B_i row by row, then Y = G_i^{-1} R_i (refined as ./csrMachine.ts does), term = -A_i^T Y. */
  private csrProjection(
    machine: CsrBlockMachine,
    x: Float64Array,
    b: Float64Array,
    term: Float64Array,
    residual2: Float64Array,
    w: number,
  ): void {
    const { p, c, rowPtr, colIdx, values, refinement } = machine.storage;
    const r = this.rowBlock;
    const y = this.rowBlock2;
    const sweep = this.csrKernel;
    const solver = machine.blockSolver;
    if (machine.rows !== null && sweep !== null && solver !== null && this.solveKernel !== null) {
      sweep.csrBlockGradient(machine.rows, w, x, b, r, null, residual2);
      // Y = G_i^{-1} R_i for the w columns in one solve, refined as solveGram does: S = A_i (A_i^T Y) - R_i, Y -= G_i^{-1} S.
      y.set(r.subarray(0, p * w));
      this.solveKernel.choleskySolveBlock(solver, y, w);
      const u = this.supportY;
      const s = this.rowBlock3;
      const unused = this.unusedSquares;
      for (let step = 0; step < refinement; step++) {
        u.fill(0, 0, c * w);
        sweep.csrBlockGradient(machine.rows, w, null, b, y, u, unused);
        sweep.csrBlockGradient(machine.rows, w, u, r, s, null, unused);
        this.solveKernel.choleskySolveBlock(solver, s, w);
        for (let t = 0; t < p * w; t++) y[t] -= s[t];
      }
      // term = A_i^+ (B_i - A_i X) = -A_i^T Y
      for (let t = 0; t < p * w; t++) y[t] = -y[t];
      term.fill(0);
      sweep.csrBlockGradient(machine.rows, w, null, b, y, term, unused);
      return;
    }
    if (machine.rows !== null && sweep !== null) sweep.csrBlockGradient(machine.rows, w, x, b, r, null, residual2);
    else csrBlockSweep(rowPtr, colIdx, values, p, w, x, b, r, null, residual2);
    const column = this.rowVector;
    const solved = this.rowVector2;
    const gram = machine.gram as GramSolver;
    for (let j = 0; j < w; j++) {
      for (let k = 0; k < p; k++) column[k] = r[k * w + j];
      refinedGramSolve(gram, machine.storage, refinement, column, solved, this.supportVector, this.rowVector3);
      for (let k = 0; k < p; k++) y[k * w + j] = solved[k];
    }
    term.fill(0);
    for (let k = 0; k < p; k++) {
      const yk = k * w;
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) {
        const v = values[e];
        const to = colIdx[e] * w;
        for (let j = 0; j < w; j++) term[to + j] -= v * y[yk + j];
      }
    }
  }
}

/** The engine's workers build their shard with this (see ShardPlan.shardModule). */
export const createShard: ShardFactory = (spec, _n, context) => new BlockShard(spec as BlockSpec, context);
