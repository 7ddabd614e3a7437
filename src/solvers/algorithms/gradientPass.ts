/**
 * The fused pass of the gradient methods (DGD, D-NAG, D-HBM): machine i reads each of its rows a_k
 * once, computes r_k = a_k . x - b_k, and while the row is in cache accumulates its gradient term
 * r_k a_k; the taskmaster sums the machines' terms into
 *   g(x) = A^T (A x - b) = sum_i A_i^T (A_i x - b_i)
 * and gets |A x - b|^2 = sum_k r_k^2 for free. Cost 4 sum_i p_i c_i <= 4 n^2 flops, no allocation.
 * The rows are independent, so a machine's rows may be cut into several chunks for the threads
 * (see ../parallel/engine.ts).
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { accumulateRowCombination, fusedRowPass } from '../linalg/rowKernels.js';
import { startShardEngine, type Shard, type ShardEngine } from '../parallel/engine.js';
import { TARGET_ROW_CHUNKS, rowChunks, type RowRange } from '../parallel/split.js';
import type { IterativeMethod } from './types.js';

/** Consecutive rows of one machine, on the machine's column support. */
export interface RowSegment {
  readonly rows: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  /** rows x c, row-major, with the rows' nonzero extents and right-hand sides. */
  readonly a: Float64Array;
  readonly aStart: Int32Array;
  readonly aEnd: Int32Array;
  readonly b: Float64Array;
}

export interface GradientShardSpec {
  readonly segments: readonly RowSegment[];
  /** Where segment s's gradient term (on its support, c entries) starts in the output. */
  readonly outputOffset: Int32Array;
}

const GRADIENT_PASS = 0;
/** Scalar of a segment: sum of r_k^2 over its rows. */
const RESIDUAL2 = 0;

/**
 * Runs the gradient methods' row segments (chunk s = segment s), on whichever thread takes them:
 * at x, r_k = a_k . x - b_k for the segment's rows, and its term sum_k r_k a_k written on the
 * machine's support at outputOffset[s].
 */
export class GradientShard implements Shard {
  private readonly segments: readonly RowSegment[];
  private readonly outputOffset: Int32Array;
  /** r_k of the segment being processed. */
  private readonly rowResidual: Float64Array;
  /** x restricted to a segment's column support. */
  private readonly supportX: Float64Array;

  constructor(spec: GradientShardSpec, _n: number) {
    this.segments = spec.segments;
    this.outputOffset = spec.outputOffset;
    this.rowResidual = new Float64Array(Math.max(1, ...spec.segments.map((s) => s.rows)));
    this.supportX = new Float64Array(Math.max(1, ...spec.segments.map((s) => (s.full ? 0 : s.c))));
  }

  run(_phase: number, segment: number, x: Float64Array, output: Float64Array, scalars: Float64Array): void {
    const { rowResidual, supportX } = this;
    const { rows, c, a, aStart, aEnd, b, cols, full } = this.segments[segment];
    if (!full) for (let t = 0; t < c; t++) supportX[t] = x[cols[t]];
    const offset = this.outputOffset[segment];
    output.fill(0, offset, offset + c);
    fusedRowPass(a, rows, c, aStart, aEnd, full ? x : supportX, b, rowResidual, 0, 1, output, offset);
    let residual2 = 0;
    for (let k = 0; k < rows; k++) residual2 += rowResidual[k] * rowResidual[k];
    scalars[segment] = residual2;
  }
}

/**
 * How the gradient methods cut the machines' rows into chunks: each row's work is its nonzero
 * extent in A_i. The cut depends on the system only (never on the thread count nor the backend).
 */
export function gradientRowChunks(system: DistributedSystem): { rowWork: Float64Array[]; ranges: RowRange[] } {
  const rowWork = system.machines.map((mc) => {
    const w = new Float64Array(mc.p);
    for (let k = 0; k < mc.p; k++) w[k] = Math.max(0, mc.aEnd[k] - mc.aStart[k]);
    return w;
  });
  return { rowWork, ranges: rowChunks(rowWork, TARGET_ROW_CHUNKS) };
}

/**
 * g(x) and |A x - b|^2 at the point `x` (shared with the threads: the gradient method's estimate,
 * written only between evaluations). The rows are cut into segments (see ../parallel/split.ts)
 * that run on the solver's threads; their terms are summed in a fixed order (the full-support
 * segments first, then the others), so the sum never depends on the thread count.
 */
export class GradientPass {
  /** The point the gradient is evaluated at. */
  readonly x: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly segments: readonly RowSegment[];
  private readonly outputOffset: Int32Array;
  private readonly gradientAtX: Float64Array;
  /**
   * Runs of consecutive full-support segments: their terms lie back to back in the output (n
   * each), so the taskmaster sums a run as one combination of rows (weights 1), with the row
   * kernels, instead of n scalar additions per segment.
   */
  private readonly fullRuns: readonly { readonly segments: number; readonly terms: Float64Array }[];
  private readonly ones: Float64Array;
  private readonly wholeStart: Int32Array;
  private readonly wholeEnd: Int32Array;

  constructor(system: DistributedSystem) {
    const { n, machines } = system;
    const { rowWork, ranges } = gradientRowChunks(system);
    this.segments = ranges.map(({ machine, from, to }): RowSegment => {
      const { c, full, cols, a, aStart, aEnd, b } = machines[machine];
      return {
        rows: to - from,
        c,
        full,
        cols,
        a: a.subarray(from * c, to * c),
        aStart: aStart.subarray(from, to),
        aEnd: aEnd.subarray(from, to),
        b: b.subarray(from, to),
      };
    });
    this.outputOffset = new Int32Array(this.segments.length + 1);
    this.segments.forEach((segment, s) => (this.outputOffset[s + 1] = this.outputOffset[s] + segment.c));
    this.engine = startShardEngine<GradientShardSpec>({
      kind: 'gradient',
      n,
      chunks: this.segments.length,
      outputLength: this.outputOffset[this.segments.length],
      scalarsPerChunk: 1,
      chunkWork: ranges.map(({ machine, from, to }) => rowWork[machine].subarray(from, to).reduce((sum, w) => sum + w, 0)),
      spec: { segments: this.segments, outputOffset: this.outputOffset },
      createShard: (spec, length) => new GradientShard(spec, length),
    });
    this.threads = this.engine.threads;
    this.x = this.engine.input;
    this.gradientAtX = new Float64Array(n);
    const fullRuns: { segments: number; terms: Float64Array }[] = [];
    for (let from = 0, to = 0; from < this.segments.length; from = to) {
      to = from + 1;
      if (!this.segments[from].full) continue;
      while (to < this.segments.length && this.segments[to].full) to++;
      fullRuns.push({ segments: to - from, terms: this.engine.output.subarray(this.outputOffset[from], this.outputOffset[to]) });
    }
    this.fullRuns = fullRuns;
    const longest = Math.max(0, ...this.fullRuns.map((run) => run.segments));
    this.ones = new Float64Array(longest).fill(1);
    this.wholeStart = new Int32Array(longest);
    this.wholeEnd = new Int32Array(longest).fill(n);
  }

  /** Evaluates at the current x; returns |A x - b|^2. */
  evaluate(): number {
    this.engine.run(GRADIENT_PASS);
    const { segments, outputOffset, gradientAtX: g } = this;
    const terms = this.engine.output;
    const n = g.length;
    g.fill(0);
    for (const run of this.fullRuns)
      accumulateRowCombination(run.terms, run.segments, n, this.wholeStart, this.wholeEnd, this.ones, 0, 1, g);
    for (let s = 0; s < segments.length; s++) {
      const { c, cols, full } = segments[s];
      if (full) continue;
      const offset = outputOffset[s];
      for (let t = 0; t < c; t++) g[cols[t]] += terms[offset + t];
    }
    return this.engine.scalarSum(RESIDUAL2);
  }

  /** g(x) of the last evaluate() (valid until the next). */
  gradient(): Float64Array {
    return this.gradientAtX;
  }

  dispose(): void {
    this.engine.dispose();
  }
}

/**
 * What DGD, D-NAG and D-HBM share: the fused pass over the machines' rows, whose point x is the
 * estimate, and the residual it measured. A subclass only moves x given g(x) (`update`); the pass
 * then evaluates g and |A x - b|^2 at the new point, ready for the next step.
 */
export abstract class GradientMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  readonly threads: number;
  private readonly pass: GradientPass;
  private residual2: number;

  constructor(system: DistributedSystem) {
    this.pass = new GradientPass(system);
    this.threads = this.pass.threads;
    this.estimate = this.pass.x;
    try {
      this.residual2 = this.pass.evaluate();
    } catch (error) {
      this.pass.dispose();
      throw error;
    }
  }

  /** Move the estimate x (in place), given the gradient g(x) at it. */
  protected abstract update(x: Float64Array, g: Float64Array): void;

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): null {
    return null;
  }

  step(): void {
    this.update(this.estimate, this.pass.gradient());
    this.residual2 = this.pass.evaluate();
  }

  dispose(): void {
    this.pass.dispose();
  }
}
