/**
 * The machines' passes over several right-hand sides at once (a block of w vectors): one sweep over
 * each machine's data serves every column, where the single-vector passes (./gradientPass.ts,
 * ./cimminoPass.ts, ./consensusPass.ts) sweep it once per vector.
 *
 * Blocks are flat Float64Arrays, row-major n x w: entry (j, c) at j w + c, so that a row of a
 * machine's data meets the w columns' entries contiguously. The columns held are the *active* ones
 * (`setActive`): a column whose run has stopped is dropped from the block and costs nothing more.
 * What a machine computes is ./blockShard.ts's; the machines run on the solver's threads as the
 * single-vector passes' do (../parallel/engine.ts: every thread takes machines until none is left,
 * each writing its own term and its own residuals), and the residuals are summed in machine order.
 * The estimate X is the engine's shared input (`point`), so a pass copies nothing in. The methods
 * step on the threads too (`advance`): a second phase whose chunks are row ranges of the n x w
 * block, each summing the machines' terms (APC's and MLM's offsets D_i) on its rows in machine order
 * and updating X there in place (`sumTerms` sums in the same order on this thread). Either way the
 * iterates never depend on the thread count.
 */
import { startShardEngine, type ShardEngine } from '../parallel/engine.js';
import { restrictColumns } from '../sparse/csr.js';
import { holdBlasToOneThread, selectedKernels } from '../linalg/kernels.js';
import type { DistributedSystem } from './machineData.js';
import {
  BlockShard,
  CONSENSUS_PHASE,
  STEP_PHASE,
  blockScalarsPerChunk,
  blockWorkEntries,
  carriesBlock,
  type BlockPassKind,
  type BlockSpec,
  type BlockStepRule,
  type BlockStorage,
} from './blockShard.js';
import { blockPlacement } from './placement.js';
import { stripStart } from './storage.js';
import { stepLayout } from './stepRules.js';

export type { BlockPassKind, BlockStepRule } from './blockShard.js';

/** ./blockShard.ts or .js, whichever extension this module has: what the engine's workers import. */
const SHARD_MODULE = new URL(import.meta.url.endsWith('.ts') ? './blockShard.ts' : './blockShard.js', import.meta.url).href;

/** Rows `rows` of the K-column row-major block `full`, columns `active` only: p x w row-major, from out[offset]. */
function packRows(
  full: Float64Array,
  K: number,
  rows: Int32Array | null,
  p: number,
  active: readonly number[],
  out: Float64Array,
  offset = 0,
): void {
  const w = active.length;
  for (let k = 0; k < p; k++) {
    const from = (rows === null ? k : rows[k]) * K;
    for (let j = 0; j < w; j++) out[offset + k * w + j] = full[from + active[j]];
  }
}

/** Matrix entries machine i's pass reads per column (it shares the machines out among the threads and decides their number). */
function entriesPerColumn(storage: BlockStorage): number {
  if (storage.storage === 'dense') return storage.p * storage.c * (storage.q !== null ? 2 : 1);
  const nnz = storage.rowPtr[storage.p];
  return storage.gram === null ? 2 * nnz : 2 * (1 + storage.refinement) * (nnz + storage.gram.symbolic.nnzL);
}

export class BlockPass {
  readonly n: number;
  /** Right-hand sides in all (K) and the columns now in the block. */
  readonly columns: number;
  readonly threads: number;
  /** X, n x w at the block's width w (n x K long): the estimate the passes read, shared with the threads. */
  readonly point: Float64Array;
  /** D-HBM's z, D-NAG's y or APC's y (n x w, n x K long), which the step phase reads with X; empty for the other rules. */
  readonly carried: Float64Array;
  /** With the 'consensus' rule, machine i's offset D_i (c_i x w on its support, c_i x K long), which the step phase sums; else none. */
  readonly offsets: readonly Float64Array[];
  private active: number[];
  private readonly spec: BlockSpec;
  private readonly engine: ShardEngine;
  /** Per machine, the right-hand sides its pass reads for every column (p x K): B_i, or R^{-T} B_i (dense projection). */
  private readonly machineRhs: Float64Array[];
  /**
   * Machine i's term of the last pass, c_i x w on its support in the first c_i w entries of its
   * region (c_i x K long): the gradient methods' A_i^T (A_i X - B_i), the projection methods' A_i^+ (B_i - A_i X).
   * Valid until the next pass (a caller may repack it in place when a column retires).
   */
  readonly terms: readonly Float64Array[];
  /** Gives OpenBLAS back the thread count it had before this pass held it to one (see the constructor). */
  private readonly releaseBlas: () => void;

  /**
   * `rhs`: K right-hand sides of length n (global row order); `step`: the update `advance` applies
   * on the threads (null: the caller updates X itself).
   */
  constructor(system: DistributedSystem, rhs: readonly Float64Array[], kind: BlockPassKind, step: BlockStepRule | null = null) {
    const K = rhs.length;
    const { n } = system;
    this.n = n;
    this.columns = K;
    this.active = Array.from({ length: K }, (_, j) => j);
    const all = new Float64Array(n * K);
    for (let j = 0; j < K; j++) for (let r = 0; r < n; r++) all[r * K + j] = rhs[j][r];
    const m = system.machines.length;
    const rowOffset = new Int32Array(m + 1);
    const outputOffset = new Int32Array(m + 1);
    this.machineRhs = [];
    const machines = system.machines.map((machine, i): BlockStorage => {
      const { p, c, full, cols } = machine;
      rowOffset[i + 1] = rowOffset[i] + p;
      outputOffset[i + 1] = outputOffset[i] + c * K;
      const b = new Float64Array(p * K);
      packRows(all, K, machine.rows, p, this.active, b);
      if ('q' in machine) {
        if (kind === 'projection') selectedKernels().dense.solveRTransposedBlock(machine.r, p, b, K);
        this.machineRhs.push(b);
        return kind === 'gradient'
          ? { storage: 'dense', p, c, full, cols, a: machine.a, q: null, r: null }
          : { storage: 'dense', p, c, full, cols, a: null, q: machine.q, r: machine.r };
      }
      this.machineRhs.push(b);
      // Column indices local to the support, which the pass gathers X onto.
      const local = restrictColumns(machine.a, cols);
      return {
        storage: 'csr',
        p,
        c,
        full,
        cols,
        rowPtr: local.rowPtr,
        colIdx: local.colIdx,
        values: local.values,
        gram: kind === 'projection' ? { symbolic: machine.gram.symbolic, values: machine.gram.values } : null,
        refinement: machine.gramRefinement,
      };
    });
    this.spec = { kind, n, columns: K, machines, rowOffset, outputOffset, step, stepLayout: step === null ? null : stepLayout(machines) };
    // On the TypeScript backend the data, X and the terms go into a WebAssembly arena, where the block
    // kernels run in WebAssembly SIMD; each thread's work blocks are in its slot's workspace.
    const placement = blockPlacement();
    this.engine = startShardEngine<BlockSpec>({
      shardModule: SHARD_MODULE,
      backend: placement.backend,
      arena: placement.arena,
      arenaSlot: { maxCols: 0, workEntries: blockWorkEntries(machines, K) },
      // X, the machines' right-hand sides, and z or y.
      n: (carriesBlock(step) ? 3 : 2) * n * K,
      // Machines in a pass phase, row ranges in a step phase.
      chunks: m,
      // The terms, and the offsets D_i after them.
      outputLength: (step?.rule === 'consensus' ? 2 : 1) * outputOffset[m],
      scalarsPerChunk: blockScalarsPerChunk(K, step),
      chunkWork: machines.map((storage) => K * entriesPerColumn(storage)),
      spec: this.spec,
      createShard: (spec, _n, context) => new BlockShard(spec, context),
    });
    this.threads = this.engine.threads;
    this.terms = machines.map((machine, i) => this.engine.output.subarray(outputOffset[i], outputOffset[i] + machine.c * K));
    // Each solver thread runs its own dtrmm (and dgemm where the pass is not fused): OpenBLAS on one thread meanwhile.
    this.releaseBlas = holdBlasToOneThread(this.threads > 1 ? selectedKernels().blasThreads : null);
    this.point = this.engine.input.subarray(0, n * K);
    this.carried = this.engine.input.subarray(2 * n * K, carriesBlock(step) ? 3 * n * K : 2 * n * K);
    const output = this.engine.output;
    this.offsets =
      step?.rule === 'consensus'
        ? machines.map((machine, i) =>
            output.subarray(outputOffset[m] + outputOffset[i], outputOffset[m] + outputOffset[i] + machine.c * K),
          )
        : [];
    this.packRhs();
  }

  /** Width of the block: the active columns. */
  get width(): number {
    return this.active.length;
  }

  /** Machine i's column support (length c_i) and whether it is every column. */
  support(i: number): { c: number; full: boolean; cols: Int32Array } {
    return this.spec.machines[i];
  }

  get machineCount(): number {
    return this.spec.machines.length;
  }

  /** The columns the block holds from now on (indices into the K right-hand sides, ascending). */
  setActive(columns: readonly number[]): void {
    this.active = [...columns];
    this.packRhs();
  }

  /** The machines' right-hand sides for the active columns, into the engine's input after X. */
  private packRhs(): void {
    const { n, columns: K } = this;
    const w = this.width;
    const input = this.engine.input;
    this.spec.machines.forEach((machine, i) => {
      packRows(this.machineRhs[i], K, null, machine.p, this.active, input, n * K + this.spec.rowOffset[i] * w);
    });
  }

  /** Runs the machines' pass at x (copied into `point` unless it is `point`); residual2[j] = |A x_j - b_j|^2, summed in machine order. */
  private run(x: Float64Array, residual2: Float64Array, consensus: boolean): void {
    const w = this.width;
    if (x !== this.point) this.point.set(x.subarray(0, this.n * w));
    this.engine.run(consensus ? CONSENSUS_PHASE | w : w);
    for (let j = 0; j < w; j++) residual2[j] = this.engine.scalarSum(j);
  }

  /**
   * The machines' pass at X: terms[i] (c_i x w, on machine i's support), the gradient methods'
   * A_i^T (A_i X - B_i) or the projection methods' A_i^+ (B_i - A_i X) (block Cimmino's term and
   * APC's projection); residual2[j] = |A x_j - b_j|^2. With `consensus` (the 'consensus' rule only)
   * each machine also measures and moves its offset D_i (./blockShard.ts CONSENSUS_PHASE; consensusMeasures).
   */
  termsAt(x: Float64Array, residual2: Float64Array, consensus = false): void {
    if (consensus && this.spec.step?.rule !== 'consensus') throw new Error('Only a consensus block pass keeps offsets.');
    this.run(x, residual2, consensus);
  }

  /** Machine i's measures of the last CONSENSUS_PHASE pass: near_i and inside_i per active column (views, valid until the next pass). */
  consensusMeasures(i: number): { near: Float64Array; inside: Float64Array } {
    const K = this.columns;
    const stride = blockScalarsPerChunk(K, this.spec.step);
    const scalars = this.engine.scalars;
    const w = this.width;
    return {
      near: scalars.subarray(i * stride + K, i * stride + K + w),
      inside: scalars.subarray(i * stride + 2 * K, i * stride + 2 * K + w),
    };
  }

  /**
   * One step on the threads: the step rule's update of X (and z or y) from the last pass's terms,
   * summed row range by row range in machine order, then the pass at the new X; residual2[j] =
   * |A x_j - b_j|^2 there (with the 'consensus' rule, the machines' measures and offsets too:
   * termsAt's `consensus`). The calling thread touches no n x w block.
   */
  advance(residual2: Float64Array): void {
    const { step } = this.spec;
    if (step === null) throw new Error('This block pass has no step rule.');
    this.engine.run(STEP_PHASE | this.width);
    this.run(this.point, residual2, step.rule === 'consensus');
  }

  /** out (n x w) = sum_i terms[i] scattered from the supports, in machine order. */
  sumTerms(terms: readonly Float64Array[], out: Float64Array): void {
    const w = this.width;
    out.fill(0, 0, this.n * w);
    this.spec.machines.forEach(({ c, full, cols }, i) => {
      const term = terms[i];
      const first = full ? 0 : stripStart(cols);
      if (first >= 0) {
        // A strip's rows are contiguous in out too.
        const to = first * w;
        for (let t = 0; t < c * w; t++) out[to + t] += term[t];
      } else
        for (let t = 0; t < c; t++) {
          const to = cols[t] * w;
          for (let j = 0; j < w; j++) out[to + j] += term[t * w + j];
        }
    });
  }

  /** Ends the pass's threads (idempotent). */
  dispose(): void {
    this.engine.dispose();
    this.releaseBlas();
  }
}
