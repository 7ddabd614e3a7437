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
 *  - dense: R_i = A_i X - B_i, term A_i^T R_i for the gradient methods; W_i = Q_i^T X - R^{-T} B_i,
 *    A_i X - B_i = R^T W_i and the projection term A_i^+ (B_i - A_i X) = -Q_i W_i for the projection
 *    methods (A_i^T = Q_i R). On the native backend both products in one sweep over the rows of A_i or
 *    Q_i^T (the addon's rowsFusedBlock: each row read once, as the single-vector pass reads it; two dgemm
 *    read it twice) and R^T W_i by dtrmm; elsewhere three matrix-matrix products (the thread's
 *    blockProduct: WebAssembly SIMD tiles on the TypeScript backend's arena, else a TypeScript loop;
 *    ../linalg/blockKernels.ts).
 *  - CSR: one pass over the rows of A_i for the w columns (row k's entries applied to w values each;
 *    the thread's csrBlock: the addon's, the WebAssembly one or the TypeScript loop, the same bits);
 *    the projection term solves with the Cholesky factor of G_i = A_i A_i^T, every column at once
 *    (CHOLMOD's block solve, or the WebAssembly or TypeScript one: solveCholesky's bits on each
 *    column), with the same refinement corrections as ./csrMachine.ts.
 * In an arena, the blocks the kernels write (the thread's work blocks below) are in its workspace.
 */
import {
  gramBlockWorkLength,
  type BlockConsensus,
  type BlockProduct,
  type BlockStepKernel,
  type CsrBlockKernel,
  type DenseBlockTerm,
  type GramBlockSolver,
} from '../linalg/blockKernels.js';
import type { Shard, ShardFactory, ThreadContext } from '../parallel/protocol.js';
import { passKernels, type PassKernels } from './placement.js';
import { ruleCarries, STEP_RULE_CODE, stepRows, type StepLayout, type StepRule } from './stepRules.js';
import { stripStart, type CsrMachineStorage } from './storage.js';

export type BlockPassKind = 'gradient' | 'projection';

/**
 * The update a step phase applies on its rows (./stepRules.ts), with G = sum_i terms[i] (in machine order);
 * for APC and MLM ('consensus', ../algorithms/blockMethods.ts) G = sum_i D_i (the offsets) and y the carried
 * block: xbar = alpha (G + m y) + beta xbar (alpha = eta / m, beta = 1 - eta).
 */
export interface BlockStepRule extends StepRule {
  /** 'consensus': the offsets' step, D_i += gamma (term_i - D_i) (APC's gamma; 1 for MLM), applied by a pass phase with CONSENSUS_PHASE. */
  readonly gamma?: number;
}

/** Phase bit of a step phase (the low bits are the width w, as a pass phase's). */
export const STEP_PHASE = 1 << 16;
/**
 * Phase bit of a pass phase that also does APC's and MLM's per-machine bookkeeping (the 'consensus' rule):
 * after machine i's term, with e = xbar - y on its support (xbar the pass's point, y the carried block),
 * near_i = sum (e - D_i)^2 and, on a partial support, inside_i = sum e^2 per column (its scalars after the
 * residuals), then D_i += gamma (term_i - D_i): what ../algorithms/blockMethods.ts ConsensusBlock did on the
 * calling thread after the pass (the same operations in the same order), now on the machine's thread.
 */
export const CONSENSUS_PHASE = 1 << 17;

/** Scalars a block pass keeps per machine: the K residuals, and with the 'consensus' rule near_i and inside_i (K each) after them. */
export function blockScalarsPerChunk(columns: number, step: BlockStepRule | null): number {
  return (step?.rule === 'consensus' ? 3 : 1) * columns;
}

/** Whether `rule` carries a block besides x (D-HBM's z, D-NAG's y, APC's y), at input[2 n K]. */
export function carriesBlock(rule: BlockStepRule | null): boolean {
  return rule !== null && ruleCarries(rule.rule);
}

/** Rows of R^T W a product makes at once in the dense projection pass (BlockShard.upperTransposedProduct). */
const TRIANGLE_TILE = 16;

/** Rows a step phase sums at once, so that the sums stay in cache while every machine's term is added (native/src/block_step.c's too). */
const STEP_TILE_ROWS = 256;

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
  /**
   * Machine i's term starts at output[outputOffset[i]] (c_i K long; length m + 1); with the
   * 'consensus' rule its offset D_i at output[outputOffset[m] + outputOffset[i]].
   */
  readonly outputOffset: Int32Array;
  /** What a step phase applies, or null when the method runs no step phase. */
  readonly step: BlockStepRule | null;
  /** The machines' supports as the step reads them (./stepRules.ts stepLayout; in the run's arena when it has one), with `step`. */
  readonly stepLayout: StepLayout | null;
}

/** A CSR machine as this thread runs it: its block sweep and, for the projection pass, its block solves with G_i's factor. */
interface CsrBlockMachine {
  readonly storage: CsrBlockStorage;
  readonly sweep: CsrBlockKernel;
  readonly gram: GramBlockSolver | null;
}

/** Largest p_i and c_i over the machines (1 at least). */
function largestBlock(machines: readonly BlockStorage[]): { largestP: number; largestC: number } {
  let largestP = 1;
  let largestC = 1;
  for (const { p, c } of machines) {
    largestP = Math.max(largestP, p);
    largestC = Math.max(largestC, c);
  }
  return { largestP, largestC };
}

/** Entries of the work blocks a thread of a block run writes (a WebAssembly arena's workspace holds them): see BlockShard. */
export function blockWorkEntries(machines: readonly BlockStorage[], columns: number): number {
  const { largestP, largestC } = largestBlock(machines);
  // Three row blocks and the Gram solves' work (gramBlockWorkLength: P B and the backward sweep's sums).
  return (2 * largestC + 3 * largestP + 3) * columns + gramBlockWorkLength(largestP, columns);
}

export class BlockShard implements Shard {
  private readonly spec: BlockSpec;
  private readonly csr: (CsrBlockMachine | null)[];
  private readonly product: BlockProduct;
  /** The addon's one-sweep dense pass, else null (three products). */
  private readonly denseTerm: DenseBlockTerm | null;
  /** This thread's work blocks, sized for the largest machine at full width (in the arena's workspace when there is one). */
  private readonly supportX: Float64Array;
  private readonly supportY: Float64Array;
  private readonly rowBlock: Float64Array;
  private readonly rowBlock2: Float64Array;
  private readonly rowBlock3: Float64Array;
  /** Where the sweeps' squares go when they are not wanted. */
  private readonly unusedSquares: Float64Array;
  /** A step phase's sums over a tile of rows (STEP_TILE_ROWS x w). */
  private readonly tileSums: Float64Array;
  /** The step phase's kernel (the addon's, or WebAssembly's on the run's arena), else null: stepRows' loop. */
  private readonly stepKernel: BlockStepKernel | null;
  /** APC's and MLM's bookkeeping after a pass (WebAssembly's on the run's arena, else the TypeScript loop), and its sums (2 K). */
  private readonly consensusKernel: BlockConsensus;
  private readonly consensusSums: Float64Array;

  constructor(spec: BlockSpec, context: ThreadContext) {
    this.spec = spec;
    const K = spec.columns;
    const kernels: PassKernels = passKernels(context);
    this.product = kernels.blockProduct;
    this.denseTerm = kernels.denseBlockTerm;
    const { largestP, largestC } = largestBlock(spec.machines);
    // The blocks the kernels write: in the arena when the kernels are WebAssembly ones (blockWorkEntries long).
    const workspace = context.arenaKernels?.workspace ?? new Float64Array(blockWorkEntries(spec.machines, K));
    let taken = 0;
    const take = (length: number): Float64Array => workspace.subarray(taken, (taken += length));
    this.supportX = take(largestC * K);
    this.supportY = take(largestC * K);
    this.rowBlock = take(largestP * K);
    this.rowBlock2 = take(largestP * K);
    this.rowBlock3 = take(largestP * K);
    const gramWork = take(gramBlockWorkLength(largestP, K));
    this.unusedSquares = take(K);
    this.consensusSums = take(2 * K);
    this.consensusKernel = kernels.blockConsensus;
    const layout = spec.stepLayout;
    this.stepKernel = layout !== null ? kernels.blockStep(spec.n, K, layout.strip, layout.cols, layout.colsOffset) : null;
    this.tileSums = new Float64Array(spec.step !== null && this.stepKernel === null ? STEP_TILE_ROWS * K : 0);
    this.csr = spec.machines.map((storage) => {
      if (storage.storage === 'dense') return null;
      const { p, c, rowPtr, colIdx, values, gram } = storage;
      return {
        storage,
        sweep: kernels.csrBlock({ p, c, rowPtr, colIdx, values }),
        gram: gram !== null ? kernels.gramBlockSolver(gram, gramWork) : null,
      };
    });
  }

  /** Phase w: machine `chunk`'s pass over the w active columns; phase STEP_PHASE | w: the step on row range `chunk`. */
  run(phase: number, chunk: number, input: Float64Array, output: Float64Array, scalars: Float64Array): void {
    if ((phase & STEP_PHASE) !== 0) {
      this.stepRows(phase & (STEP_PHASE - 1), chunk, input, output);
      return;
    }
    const w = phase & (STEP_PHASE - 1);
    const { n, columns: K, kind, rowOffset, outputOffset, step } = this.spec;
    const storage = this.spec.machines[chunk];
    const { p, c } = storage;
    const x = input.subarray(0, n * w);
    const from = n * K + rowOffset[chunk] * w;
    const rhs = input.subarray(from, from + p * w);
    const term = output.subarray(outputOffset[chunk], outputOffset[chunk] + c * w);
    const stride = blockScalarsPerChunk(K, step);
    const residual2 = scalars.subarray(chunk * stride, chunk * stride + w);
    residual2.fill(0);
    const onSupport = this.onSupport(storage, x, w);
    if (storage.storage === 'dense') this.dense(storage, onSupport, rhs, term, residual2, w);
    else {
      const machine = this.csr[chunk] as CsrBlockMachine;
      if (kind === 'gradient') machine.sweep.term(w, onSupport, rhs, this.rowBlock, term, residual2);
      else this.csrProjection(machine, onSupport, rhs, term, residual2, w);
    }
    if ((phase & CONSENSUS_PHASE) !== 0)
      this.consensus(chunk, input, output, scalars.subarray(chunk * stride + K, chunk * stride + stride), w);
  }

  /**
   * CONSENSUS_PHASE's bookkeeping of machine `chunk` after its term (the thread's BlockConsensus): with e = xbar - y
   * on its support, near[j] = sum_t (e_tj - D_tj)^2, inside[j] = sum_t e_tj^2 (partial supports; 0 on a full one;
   * `measures` holds near in its first K entries, inside in the next K), then D += gamma (term - D).
   */
  private consensus(chunk: number, input: Float64Array, output: Float64Array, measures: Float64Array, w: number): void {
    const { n, columns: K, outputOffset, machines } = this.spec;
    const gamma = (this.spec.step as BlockStepRule).gamma ?? 1;
    const { c, full, cols } = machines[chunk];
    const m = machines.length;
    const y = input.subarray(2 * n * K, 2 * n * K + n * w);
    const term = output.subarray(outputOffset[chunk], outputOffset[chunk] + c * w);
    const d = output.subarray(outputOffset[m] + outputOffset[chunk], outputOffset[m] + outputOffset[chunk] + c * w);
    // The sums go to this thread's work block (in the arena with the WebAssembly kernel), then to the scalars.
    const near = this.consensusSums.subarray(0, w);
    const inside = full ? null : this.consensusSums.subarray(K, K + w);
    // A strip's rows of X and y are consecutive (from its first); a full support is the strip from 0.
    const first = full ? 0 : stripStart(cols);
    this.consensusKernel(c, w, input, y, first, cols, d, term, gamma, near, inside);
    measures.set(near);
    if (inside === null) measures.fill(0, K, K + w);
    else measures.set(inside, K);
  }

  /**
   * The step on rows [chunk n / m, (chunk + 1) n / m) of the n x w block: G's rows summed from the
   * machines' terms in machine order (from 0, as a sum over the whole block would), then the rule's
   * update of X (and z or y) in place: the next pass's input. Every entry is written by one chunk
   * and reads only its own row of every block, so the result is that of one thread, bit for bit.
   */
  private stepRows(w: number, chunk: number, input: Float64Array, output: Float64Array): void {
    const { n, columns: K, machines, outputOffset } = this.spec;
    const step = this.spec.step as BlockStepRule;
    const { rule, alpha, beta } = step;
    const m = machines.length;
    const first = Math.floor((chunk * n) / m);
    const end = Math.floor(((chunk + 1) * n) / m);
    // The consensus rule sums the offsets D_i, stored after the terms.
    const summed = rule === 'consensus' ? outputOffset[m] : 0;
    if (this.stepKernel !== null) {
      this.stepKernel.run(STEP_RULE_CODE[rule], alpha, beta, w, first, end, input, output, summed);
      return;
    }
    stepRows(machines, outputOffset, summed, step, n, K, w, first, end, input, output, this.tileSums);
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
   * With the addon's one-sweep kernel the products' sums run in another order than dgemm's: they agree to rounding.
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
    if (this.denseTerm !== null) {
      // One sweep over the rows for both products (each row read once), R^T W by a triangular product.
      const residual = gradient ? first : this.rowBlock2;
      this.denseTerm(p, c, w, gradient ? 1 : -1, rows, x, rhs, storage.r, first, residual, term);
      for (let k = 0; k < p * w; k++) residual2[k % w] += residual[k] * residual[k];
      return;
    }
    first.set(rhs);
    this.product(false, p, w, c, 1, rows, c, x, w, -1, first, w);
    let residual = first;
    if (!gradient) {
      residual = this.rowBlock2;
      this.upperTransposedProduct(p, w, storage.r as Float64Array, first, residual);
    }
    for (let k = 0; k < p * w; k++) residual2[k % w] += residual[k] * residual[k];
    this.product(true, c, w, p, gradient ? 1 : -1, rows, c, first, w, 0, term, w);
  }

  /**
   * out (p x w) = R^T W for R upper triangular (p x p, row-major): row i of R^T W sums R[l, i] W[l] over l <= i only,
   * so each tile of TRIANGLE_TILE rows of out stops at its last row's l, about half the products of a full R^T W.
   * The terms left out are exact zeros (R's strict lower part).
   */
  private upperTransposedProduct(p: number, w: number, r: Float64Array, W: Float64Array, out: Float64Array): void {
    for (let i = 0; i < p; i += TRIANGLE_TILE) {
      const rows = Math.min(TRIANGLE_TILE, p - i);
      this.product(true, rows, w, i + rows, 1, r.subarray(i), p, W, w, 0, out.subarray(i * w), w);
    }
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
    const { p, c, refinement } = machine.storage;
    const r = this.rowBlock;
    const y = this.rowBlock2;
    const { sweep } = machine;
    const gram = machine.gram as GramBlockSolver;
    const unused = this.unusedSquares;
    sweep.run(w, x, b, r, null, residual2);
    // Y = G_i^{-1} R_i for the w columns at once, refined as refinedGramSolve (./csrMachine.ts) does, in
    // the same operations: S = A_i (A_i^T Y) - R_i (its correction negated), Y -= G_i^{-1} S.
    y.set(r.subarray(0, p * w));
    gram.solve(y, w);
    const u = this.supportY;
    const s = this.rowBlock3;
    for (let step = 0; step < refinement; step++) {
      u.fill(0, 0, c * w);
      sweep.run(w, null, b, y, u, unused);
      sweep.run(w, u, r, s, null, unused);
      gram.solve(s, w);
      for (let t = 0; t < p * w; t++) y[t] -= s[t];
    }
    // term = A_i^+ (B_i - A_i X) = -A_i^T Y
    for (let t = 0; t < p * w; t++) y[t] = -y[t];
    term.fill(0);
    sweep.run(w, null, b, y, term, unused);
  }
}

/** The engine's workers build their shard with this (see ShardPlan.shardModule). */
export const createShard: ShardFactory = (spec, _n, context) => new BlockShard(spec as BlockSpec, context);
