/**
 * The gradient methods' pass (DGD, D-NAG, D-HBM) over the whole system: machine i reads each of
 * its rows a_k once, computes r_k = a_k . x - b_k, and while the row is in cache accumulates its
 * gradient term r_k a_k; the taskmaster sums the machines' terms into
 *   g(x) = A^T (A x - b) = sum_i A_i^T (A_i x - b_i)
 * and gets |A x - b|^2 = sum_k r_k^2 for free. Cost 4 sum_i p_i c_i <= 4 n^2 flops, no allocation.
 * On CSR storage the same pass reads each stored entry once (./csrMachine.ts): 4 nnz(A) flops.
 * The rows are independent, so a machine's rows are cut into several chunks for the threads
 * (../parallel/split.ts); the cut depends on the system only, and the step phase sums the chunks'
 * terms in chunk order (each thread a range of columns), so g never depends on the thread count.
 * A CSR system whose pass is too small for threads (nnz(A) below parallelMinWork(), the work from
 * which a run takes threads: ../parallel/threads.ts) is one chunk instead: every machine's rows in
 * machine order, on the global columns, so the machines' terms accumulate straight into g, which
 * is that chunk's output: no gather, no per-machine term to clear, one term for the step to read
 * (at 1138_bus, m = 10, these were most of the pass). Which layout a system gets depends on it and
 * on that setting only, never on the thread count.
 */
import type { DistributedSystem, CsrSystem, DenseFactors } from './machineData.js';
import { fusedRowPass } from '../linalg/rowKernels.js';
import type { ShardEngine } from '../parallel/engine.js';
import { TARGET_ROW_CHUNKS, rowChunks, type RowRange } from '../parallel/split.js';
import { parallelMinWork } from '../parallel/threads.js';
import { startFleet } from './fleet.js';
import { gradientChunkStaging, gradientChunksInArena } from './placement.js';
import type { ArenaStaging } from '../linalg/wasmRowKernels.js';
import type { CsrMachine } from './csrMachine.js';
import type { DenseMachine } from './machine.js';
import { registerMachinePass, type PassParameters, type StepOn } from './machinePass.js';
import { addTermRows, ruleCarries, type StepRule } from './stepRules.js';
import { STEP_PHASE, WHOLE_STEP_PHASE } from './machineShard.js';
import { csrRowRange, denseRowRange, rowEntries, type CsrMachineStorage, type MachineStorage } from './storage.js';

/** Scalar of a chunk: sum of r_k^2 over its rows. */
const RESIDUAL2 = 0;

/** A dense chunk's term A_i^T (A_i x - b_i) on its support and |A_i x - b_i|^2, in one sweep over its rows (the fused row pass). */
const denseGradientTerm: StepOn<DenseMachine, PassParameters> = (machine, _params, x, term, offset, scalars, at) => {
  const { p, c } = machine.storage;
  const { a, aStart, aEnd, b } = machine.rows();
  const residual = machine.scratch.rowValues;
  const xs = machine.onSupport(x);
  term.fill(0, offset, offset + c);
  fusedRowPass(machine.kernels.rows, a, p, c, aStart, aEnd, xs, b, residual, 0, 1, term, offset);
  let residual2 = 0;
  for (let k = 0; k < p; k++) residual2 += residual[k] * residual[k];
  scalars[at + RESIDUAL2] = residual2;
};

/** A CSR chunk's term and |A_i x - b_i|^2 on the thread's CSR kernel, x read in place when the support is consecutive columns. */
const csrGradientTerm: StepOn<CsrMachine, PassParameters> = (machine, _params, x, term, offset, scalars, at) => {
  const kernel = machine.csrGradient();
  scalars[at + RESIDUAL2] =
    machine.firstColumn >= 0 ? kernel.run(x, machine.firstColumn, term, offset) : kernel.run(machine.onSupport(x), 0, term, offset);
};

/** The gradient methods' machine pass: one phase, each chunk's term A_i^T (A_i x - b_i) and |A_i x - b_i|^2. */
export const GRADIENT_PASS = registerMachinePass<PassParameters>({
  name: 'gradient',
  module: import.meta.url,
  scalarsPerMachine: 1,
  steps: [{ dense: denseGradientTerm, csr: csrGradientTerm }],
});
/** Its one phase. */
export const GRADIENT_TERMS = 0;

/**
 * How the gradient pass cuts the machines' rows into chunks: each row's work is its nonzero
 * extent in A_i (dense) or its stored entries (CSR). The cut depends on the system only (never on
 * the thread count nor the backend).
 */
export function gradientRowChunks(system: DistributedSystem | DenseFactors): { rowWork: Float64Array[]; ranges: RowRange[] } {
  const rowWork = system.machines.map(rowEntries);
  return { rowWork, ranges: rowChunks(rowWork, TARGET_ROW_CHUNKS) };
}

/** Whether a CSR system's gradient pass is one chunk of all its rows (see the top of this file). */
export function singleCsrChunk(system: CsrSystem): boolean {
  let nnz = 0;
  for (const machine of system.machines) nnz += machine.a.rowPtr[machine.p];
  return nnz < parallelMinWork();
}

/** Every machine's rows in machine order on the global columns (local = global: full support), with their b. */
function wholeSystemChunk(system: CsrSystem): CsrMachineStorage {
  const { n, machines } = system;
  let p = 0;
  let nnz = 0;
  for (const machine of machines) {
    p += machine.p;
    nnz += machine.a.rowPtr[machine.p];
  }
  const rowPtr = new Int32Array(p + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  const b = new Float64Array(p);
  let row = 0;
  let entry = 0;
  for (const machine of machines) {
    const { a } = machine;
    const first = a.rowPtr[0];
    const count = a.rowPtr[machine.p] - first;
    colIdx.set(a.colIdx.subarray(first, first + count), entry);
    values.set(a.values.subarray(first, first + count), entry);
    b.set(machine.b, row);
    for (let k = 1; k <= machine.p; k++) rowPtr[row + k] = entry + a.rowPtr[k] - first;
    row += machine.p;
    entry += count;
  }
  const cols = Int32Array.from({ length: n }, (_, j) => j);
  return { storage: 'csr', p, c: n, full: true, cols, rowPtr, colIdx, values, b, gram: null, refinement: 0 };
}

/**
 * Whether the step phase is handed to the threads: on several threads, when it reads at least as many entries
 * (its terms' and x's) as a run takes threads for (../parallel/threads.ts parallelMinWork). A smaller step (a
 * dense system's: n per chunk against the pass's n^2) runs on the calling thread, which saves a phase's
 * synchronisation (~20-40 us here) on a step of a few microseconds.
 */
export function threadedStep(threads: number, stepEntries: number): boolean {
  return threads > 1 && stepEntries >= parallelMinWork();
}

/** A gradient method's step (./stepRules.ts): DGD's, D-HBM's or D-NAG's rule and parameters. */
export interface GradientStepRule extends StepRule {
  readonly rule: 'dgd' | 'dhbm' | 'dnag';
}

/**
 * A gradient method's pass and step. evaluate() runs the machines' pass at the point `x` (shared with
 * the threads: the method's estimate, written only by advance()) and returns |A x - b|^2; advance() runs
 * the fleet's step phase (./machineShard.ts STEP_PHASE): each thread takes ranges of the columns, sums the
 * chunks' terms there into g(x), from 0 in chunk order, and moves x (and the carried vector: D-HBM's z,
 * D-NAG's y) by the rule, with the addon's step on the native backend and the WebAssembly one on the TypeScript
 * backend's arena (the same operations). A step too small for the threads (threadedStep: every dense one, a small
 * or one-thread CSR one) runs the same phase on the calling thread alone. Every column is summed and moved in the
 * same order whichever thread does it, so the iterates never depend on the thread count.
 */
export class GradientPass {
  /** The point the gradient is evaluated at: the first n entries of the engine's input. */
  readonly x: Float64Array;
  /** The rule's carried vector (D-HBM's z, D-NAG's y) at the engine's input[2n, 3n), where the step reads it; empty for DGD. */
  readonly carried: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly chunks: readonly MachineStorage[];
  private readonly outputOffset: Int32Array;
  /** See threadedStep. */
  private readonly stepOnThreads: boolean;
  private readonly staged: { readonly staging: ArenaStaging; readonly mark: number; readonly top: number } | null;

  constructor(system: DistributedSystem, rule: GradientStepRule) {
    const { n } = system;
    let staging: ArenaStaging | null = null;
    let mark = 0;
    if (system.storage === 'csr' && singleCsrChunk(system)) {
      this.chunks = [wholeSystemChunk(system)];
    } else {
      const { ranges } = gradientRowChunks(system);
      // CSR chunks' new arrays are made where the run reads them, so that they are not copied again: in its arena
      // (staged), or outside one in shared memory, which a threaded engine reads as it is.
      if (system.storage === 'csr') staging = gradientChunkStaging(system);
      mark = staging?.end ?? 0;
      const place = staging ?? !gradientChunksInArena();
      this.chunks = ranges.map(({ machine, from, to }) =>
        system.storage === 'csr'
          ? csrRowRange(system.machines[machine], from, to, place)
          : denseRowRange(system.machines[machine], from, to),
      );
    }
    // x, then n unused entries and the carried vector: the block layout the addon's step reads (X at 0, the carried block at 2 n K).
    const carries = ruleCarries(rule.rule);
    const fleet = startFleet({
      pass: GRADIENT_PASS,
      params: {},
      n,
      inputLength: (carries ? 3 : 2) * n,
      machines: this.chunks,
      outputLengths: this.chunks.map((chunk) => chunk.c),
      step: { rule: rule.rule, alpha: rule.alpha, beta: rule.beta },
      arenaStaging: staging,
    });
    this.engine = fleet.engine;
    // This run's regions of the staging memory (its chunks' arrays, then its arena's own), handed back at its end.
    this.staged = staging === null ? null : { staging, mark, top: staging.end };
    this.outputOffset = fleet.outputOffset;
    this.threads = this.engine.threads;
    this.x = this.engine.input.subarray(0, n);
    this.carried = carries ? this.engine.input.subarray(2 * n, 3 * n) : new Float64Array(0);
    this.stepOnThreads = threadedStep(this.threads, n + this.outputOffset[this.chunks.length]);
  }

  /** The machines' pass at the current x; returns |A x - b|^2 (their terms kept for advance()). */
  evaluate(): number {
    this.engine.run(GRADIENT_TERMS);
    return this.engine.scalarSum(RESIDUAL2);
  }

  /**
   * x (and the carried vector) moved by the rule, with g(x) the sum of the last evaluate()'s terms: the step
   * phase on the threads (threadedStep), else on the calling thread alone.
   */
  advance(): void {
    if (this.stepOnThreads) this.engine.run(STEP_PHASE);
    else this.engine.runChunkHere(WHOLE_STEP_PHASE, 0);
  }

  /** g(x) of the last evaluate(): the chunks' terms summed from 0 in chunk order, as the step sums them (for tests and callers that read g). */
  gradient(): Float64Array {
    const g = new Float64Array(this.x.length);
    for (let s = 0; s < this.chunks.length; s++) addTermRows(this.chunks[s], this.engine.output, this.outputOffset[s], 0, g.length, 1, g);
    return g;
  }

  dispose(): void {
    this.engine.dispose();
    // Nothing reads this run's chunks or arena data after its end: the next run on the staging memory takes their pages.
    if (this.staged !== null) this.staged.staging.release(this.staged.mark, this.staged.top);
  }
}
