/**
 * The six iterations on several right-hand sides at once (PETSc's KSPMatSolve, Ginkgo's multi-column B):
 * one system (partition, factorizations) and a block of K columns iterated together, each column the
 * very iteration its single-vector method runs, with the machines' passes over a block
 * (../machines/blockPass.ts: one sweep over A_i or Q_i for every column, the machines on the solver's
 * threads). A column whose run has
 * stopped is retired: its estimate is kept and the block shrinks, so it costs no more work.
 *
 * Every update below is entrywise with the same coefficients for each column, so it runs over the
 * n x w block as over one long vector. APC and MLM iterate the form of ../machines/csrConsensusPass.ts
 * on any storage: x_i(t) = y(t) + D_i(t), y(t + 1) = (1 - gamma) y(t) + gamma xbar(t),
 * D_i(t + 1) = (1 - gamma) D_i(t) + gamma A_i^+ (b_i - A_i xbar(t)) (equal to the dense pass's
 * explicit x_i in exact arithmetic; K m n doubles would be the explicit form's price).
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { BlockPass, type BlockStepRule } from '../machines/blockPass.js';
import { checkInitialGuess } from './common.js';

/** The state machine of one algorithm on K right-hand sides of one system (see ./types.ts, IterativeMethod). */
export interface BlockIterativeMethod {
  /** K. */
  readonly columns: number;
  readonly threads: number;
  /** |A x_j - b_j|^2 of column j's estimate (its last, once retired). */
  residualNormSquared(column: number): number;
  /** max_i |x_i - xbar| of column j for consensus methods, else null. */
  consensusDistance(column: number): number | null;
  /** Copies column j's estimate into out (length n). */
  estimate(column: number, out: Float64Array): void;
  /** One iteration of every active column. */
  step(): void;
  /** Stops iterating column j (its estimate and measures stay readable). */
  retire(column: number): void;
  /**
   * The state after the last step (BlockState): views of the method's own blocks, valid until it
   * steps or retires a column again (a checkpoint encodes them at once; copy them to keep them).
   */
  state(): BlockState;
  /**
   * Puts back a state() of a block method made with the same system, parameters and right-hand
   * sides, once the columns it lacks are retired; the next step() is the one the state's method took.
   * The caller checks the blocks' lengths (against this method's own state()).
   */
  restore(state: BlockState): void;
  dispose(): void;
}

/**
 * A block method between two steps: what it needs to go on from there in another process. The
 * terms of the machines' last pass (the gradient methods' A_i^T (A_i X - B_i), Cimmino's
 * projections) are not in it: restore() computes them again at X, the same pass at the same point,
 * to the bit, as the single-vector methods do (./gradientMethod.ts).
 */
export interface BlockState {
  /** The columns still iterating, ascending; the others were retired (their runs have ended and hold their solutions). */
  readonly active: readonly number[];
  /** Per column (K): |A x_j - b_j|^2 and the consensus distance (0 without one) of the last measure. */
  readonly residual2: Float64Array;
  readonly consensus: Float64Array;
  /**
   * The blocks the iteration carries, packed at the width w = active.length: X (n x w) first, then
   * D-HBM's z or D-NAG's y (n x w), or APC's and MLM's y (n x w) and each machine's offset D_i
   * (c_i x w on its column support).
   */
  readonly blocks: readonly Float64Array[];
}

/** A block of `rows` rows of w columns, repacked when a column retires. */
interface Block {
  readonly array: Float64Array;
  readonly rows: number;
}

/** Removes packed column `gone` from a rows x w row-major block, in place (writes never pass the reads). */
function dropColumn(block: Block, w: number, gone: number): void {
  const { array, rows } = block;
  let to = 0;
  for (let r = 0; r < rows; r++) {
    const from = r * w;
    for (let j = 0; j < w; j++) if (j !== gone) array[to++] = array[from + j];
  }
}

abstract class PackedBlockMethod implements BlockIterativeMethod {
  readonly columns: number;
  protected readonly n: number;
  protected readonly pass: BlockPass;
  /** Active columns, ascending; position in this list = packed index. */
  protected active: number[];
  /** Per column (K): |A x - b|^2 and the consensus distance of the last measure. */
  private readonly residual2: Float64Array;
  protected readonly consensus: Float64Array;
  private readonly packedResidual2: Float64Array;
  private readonly retired: (Float64Array | null)[];
  /** The estimate, n x w: the pass's point, which its threads read. */
  protected readonly x: Float64Array;

  constructor(
    system: DistributedSystem,
    rhs: readonly Float64Array[],
    kind: 'gradient' | 'projection',
    private readonly isConsensus: boolean,
    step: BlockStepRule | null = null,
  ) {
    this.n = system.n;
    this.columns = rhs.length;
    this.pass = new BlockPass(system, rhs, kind, step);
    this.active = Array.from({ length: rhs.length }, (_, j) => j);
    this.residual2 = new Float64Array(rhs.length);
    this.consensus = new Float64Array(rhs.length);
    this.packedResidual2 = new Float64Array(rhs.length);
    this.retired = rhs.map(() => null);
    this.x = this.pass.point;
  }

  get threads(): number {
    return this.pass.threads;
  }

  protected get width(): number {
    return this.active.length;
  }

  /** x(0) = guess in every column (0 without one). */
  protected startAt(guess: Float64Array | undefined, target: Float64Array): void {
    const w = this.width;
    if (guess === undefined) target.fill(0);
    else for (let r = 0; r < this.n; r++) target.fill(guess[r], r * w, (r + 1) * w);
  }

  /** The packed residuals of the last pass, into the per-column measures. */
  protected measured(packed: Float64Array = this.packedResidual2): void {
    this.active.forEach((column, j) => {
      this.residual2[column] = packed[j];
    });
  }

  protected get scratchResidual2(): Float64Array {
    return this.packedResidual2;
  }

  /** The n x w (or c_i x w) blocks a retirement repacks besides x: the state, and what the last pass left for the next step. */
  protected abstract blocks(): Block[];

  /** The blocks of the state besides x (BlockState.blocks). */
  protected abstract carriedBlocks(): Block[];

  /** After restore() has put the blocks back: what the next step reads that the state does not hold. */
  protected abstract restored(): void;

  abstract step(): void;

  residualNormSquared(column: number): number {
    return this.residual2[column];
  }

  consensusDistance(column: number): number | null {
    return this.isConsensus ? this.consensus[column] : null;
  }

  estimate(column: number, out: Float64Array): void {
    const kept = this.retired[column];
    if (kept !== null) {
      out.set(kept);
      return;
    }
    const j = this.active.indexOf(column);
    const w = this.width;
    for (let r = 0; r < this.n; r++) out[r] = this.x[r * w + j];
  }

  retire(column: number): void {
    const j = this.active.indexOf(column);
    if (j < 0) return;
    const kept = new Float64Array(this.n);
    this.estimate(column, kept);
    this.retired[column] = kept;
    const w = this.width;
    for (const block of [{ array: this.x, rows: this.n }, ...this.blocks()]) dropColumn(block, w, j);
    this.active = this.active.filter((c) => c !== column);
    this.pass.setActive(this.active);
  }

  state(): BlockState {
    const w = this.width;
    const blocks = [{ array: this.x, rows: this.n }, ...this.carriedBlocks()].map(({ array, rows }) => array.subarray(0, rows * w));
    return { active: [...this.active], residual2: this.residual2, consensus: this.consensus, blocks };
  }

  restore(state: BlockState): void {
    if (state.active.length !== this.width || state.active.some((column, j) => column !== this.active[j])) {
      throw new Error(`restore: the block iterates columns [${this.active.join(', ')}], the state [${state.active.join(', ')}]`);
    }
    [{ array: this.x, rows: this.n }, ...this.carriedBlocks()].forEach(({ array }, k) => array.set(state.blocks[k]));
    this.residual2.set(state.residual2);
    this.consensus.set(state.consensus);
    this.restored();
  }

  dispose(): void {
    this.pass.dispose();
  }
}

/**
 * DGD, D-HBM and D-NAG (./gradientMethod.ts): the update moves x by g(x) = sum_i A_i^T (A_i x - b_i),
 * then the pass evaluates the terms of g and the residuals at the new x. Both run on the pass's
 * threads (BlockPass.advance): g is never formed, each row range sums its rows of the terms and
 * updates x (and z or y) there.
 */
class GradientBlock extends PackedBlockMethod {
  constructor(system: DistributedSystem, rhs: readonly Float64Array[], rule: BlockStepRule, guess: Float64Array | undefined) {
    super(system, rhs, 'gradient', false, rule);
    this.startAt(guess, this.x);
    // D-HBM: z(0) = 0; D-NAG: y(0) = x(0).
    const carried = this.pass.carried;
    if (rule.rule === 'dhbm') carried.fill(0);
    else if (rule.rule === 'dnag') carried.set(this.x);
    this.pass.termsAt(this.x, this.scratchResidual2);
    this.measured();
  }

  protected blocks(): Block[] {
    // The last pass's terms are what the next step moves by.
    const terms = this.pass.terms.map((array, i) => ({ array, rows: this.pass.support(i).c }));
    return [...terms, ...this.carriedBlocks()];
  }

  protected carriedBlocks(): Block[] {
    return this.pass.carried.length === 0 ? [] : [{ array: this.pass.carried, rows: this.n }];
  }

  /** The terms the next step moves by: the pass at the restored x. */
  protected restored(): void {
    this.pass.termsAt(this.x, this.scratchResidual2);
    this.measured();
  }

  step(): void {
    this.pass.advance(this.scratchResidual2);
    this.measured();
  }
}

/** Block Cimmino (./cimmino.ts): x += nu sum_i A_i^+ (b_i - A_i x), the terms from the pass at x; the step on the pass's threads. */
class CimminoBlock extends PackedBlockMethod {
  constructor(system: DistributedSystem, rhs: readonly Float64Array[], nu: number, guess: Float64Array | undefined) {
    super(system, rhs, 'projection', false, { rule: 'cimmino', alpha: nu, beta: 0 });
    this.startAt(guess, this.x);
    this.pass.termsAt(this.x, this.scratchResidual2);
    this.measured();
  }

  /** The terms of the last pass are what the next step moves by. */
  protected blocks(): Block[] {
    return this.pass.terms.map((array, i) => ({ array, rows: this.pass.support(i).c }));
  }

  protected carriedBlocks(): Block[] {
    return [];
  }

  protected restored(): void {
    this.pass.termsAt(this.x, this.scratchResidual2);
    this.measured();
  }

  step(): void {
    this.pass.advance(this.scratchResidual2);
    this.measured();
  }
}

/**
 * APC and MLM (./apc.ts), in the y + D_i form above; x is the taskmaster's xbar. The averaging
 * step xbar(t + 1) = (eta / m) sum_i x_i(t) + (1 - eta) xbar(t) runs on the pass's threads
 * (BlockPass.advance, which reads y and the D_i where this keeps them); the measures and the
 * advance of y and the D_i run here.
 */
class ConsensusBlock extends PackedBlockMethod {
  /** y (n x w) and D_i on machine i's support (c_i x w): the pass's, which its step phase reads. */
  private readonly y: Float64Array;
  private readonly offsets: readonly Float64Array[];
  private readonly m: number;
  /** Per column |xbar - y|^2 and the largest distance to a machine (see measureAndAdvance). */
  private readonly e2: Float64Array;
  private readonly worst: Float64Array;
  private readonly partialSupports: boolean;

  constructor(
    system: DistributedSystem,
    rhs: readonly Float64Array[],
    private readonly gamma: number,
    eta: number,
    guess: Float64Array | undefined,
  ) {
    super(system, rhs, 'projection', true, { rule: 'consensus', alpha: eta / system.m, beta: 1 - eta, gamma });
    const K = rhs.length;
    this.m = system.m;
    this.y = this.pass.carried;
    this.offsets = this.pass.offsets;
    this.e2 = new Float64Array(K);
    this.worst = new Float64Array(K);
    this.partialSupports = system.machines.some((machine) => !machine.full);
    // x_i(0) = y(0) + A_i^+ (b_i - A_i y(0)), y(0) = the guess or 0; xbar(0) their mean.
    this.startAt(guess, this.y);
    this.pass.termsAt(this.y, this.scratchResidual2);
    this.offsets.forEach((offset, i) => offset.set(this.pass.terms[i]));
    // xbar(0) = sum_i x_i(0) / m = (m y + sum_i D_i) / m.
    const sum = new Float64Array(this.n * K);
    this.pass.sumTerms(this.offsets, sum);
    const size = this.n * K;
    for (let e = 0; e < size; e++) this.x[e] = (sum[e] + this.m * this.y[e]) / this.m;
    this.pass.termsAt(this.x, this.scratchResidual2, true);
    this.measureAndAdvance();
  }

  protected blocks(): Block[] {
    return [{ array: this.y, rows: this.n }, ...this.offsets.map((array, i) => ({ array, rows: this.pass.support(i).c }))];
  }

  /** y and the D_i are the whole state: the step reads them with xbar, not the last pass's terms. */
  protected carriedBlocks(): Block[] {
    return this.blocks();
  }

  protected restored(): void {}

  /**
   * After the pass at xbar (residuals, terms, and each machine's measures and offset step, on its thread:
   * ../machines/blockShard.ts CONSENSUS_PHASE): max_i |xbar - x_i|^2 per column with e = xbar - y,
   * |e|^2 - sum_{C_i} e_j^2 + sum_{C_i} (e_j - D_ij)^2 (the first two terms only for a partial support)
   * from the machines' sums; and y += gamma e.
   */
  private measureAndAdvance(): void {
    const { x, y, gamma, n, e2, worst } = this;
    const w = this.width;
    const size = n * w;
    this.measured();
    // One sweep: e = xbar - y, |e|^2 per column (partial supports), and y += gamma e (the distances below read D_i's
    // sums, not y).
    if (this.partialSupports) {
      e2.fill(0, 0, w);
      for (let r = 0; r < n; r++)
        for (let j = 0; j < w; j++) {
          const t = r * w + j;
          const e = x[t] - y[t];
          e2[j] += e * e;
          y[t] += gamma * e;
        }
    } else for (let t = 0; t < size; t++) y[t] += gamma * (x[t] - y[t]);
    worst.fill(0, 0, w);
    for (let i = 0; i < this.offsets.length; i++) {
      const { full } = this.pass.support(i);
      const { near, inside } = this.pass.consensusMeasures(i);
      for (let j = 0; j < w; j++) {
        const d2 = full ? near[j] : Math.max(0, e2[j] - inside[j]) + near[j];
        // A NaN, once seen, stays (Math.max would drop it).
        if (!Number.isNaN(worst[j]) && !(d2 <= worst[j])) worst[j] = d2;
      }
    }
    this.active.forEach((column, j) => {
      this.consensus[column] = Math.sqrt(worst[j]);
    });
  }

  step(): void {
    this.pass.advance(this.scratchResidual2);
    this.measureAndAdvance();
  }
}

/** The block method of algorithm `id` with its parameters (validated by the caller, as for create()). */
export function createBlockMethod(
  id: string,
  system: DistributedSystem,
  parameters: Readonly<Record<string, number>>,
  rhs: readonly Float64Array[],
  initialGuess?: Float64Array,
): BlockIterativeMethod {
  const guess = checkInitialGuess(system, initialGuess);
  const p = (name: string): number => parameters[name];
  switch (id) {
    case 'dgd':
      return new GradientBlock(system, rhs, { rule: 'dgd', alpha: p('alpha'), beta: 0 }, guess);
    case 'dhbm':
      return new GradientBlock(system, rhs, { rule: 'dhbm', alpha: p('alpha'), beta: p('beta') }, guess);
    case 'dnag':
      return new GradientBlock(system, rhs, { rule: 'dnag', alpha: p('alpha'), beta: p('beta') }, guess);
    case 'cimmino':
      return new CimminoBlock(system, rhs, p('nu'), guess);
    case 'apc':
      return new ConsensusBlock(system, rhs, p('gamma'), p('eta'), guess);
    case 'mlm':
      return new ConsensusBlock(system, rhs, 1, 1, guess);
    default:
      throw new Error(`No block iteration for ${id}`);
  }
}
