/**
 * The advisor's 'refined' candidate: a partition that lowers kappa(S) = lambda_max(S) / lambda_min(S)
 * itself, S = sum_i Q_i Q_i^T, starting from the best candidate found and moving rows between machines
 * within the size bounds (./multilevel.ts machineSizeBounds).
 *
 * Which rows: ../analysis/rowMoveEffects.ts gives, for every row k and machine h, the first-order change
 * of lambda_max(S) and lambda_min(S) when k moves to h (from S's extreme eigenvectors u, v and the rank-2
 * change of S such a move makes), hence a predicted kappa(S). Scoring rows by their alignment with u or
 * v alone (cos^2(a_k, u)) misses both halves of that change: what of u the row carries on its own
 * machine is only its component orthogonal to that machine's other rows, and what it adds on the new
 * machine only its component outside that machine's row space; a row parallel to u whose machine has
 * other rows spanning u changes nothing by moving. The moves of one proposal touch pairwise distinct
 * machines, so their changes of S add up exactly (S is a sum over machines) and only the first-order
 * truncation separates the predicted from the actual kappa(S). A move the size bounds forbid is paired
 * with the best move back from its target to its source (a swap).
 *
 * Every proposal's kappa(S) is evaluated exactly (the caller's `evaluate`: the analysis' own routine,
 * so the kappa(S) reported is an analysis' on that assignment) and kept only if lower: the result is
 * never worse than the start. A rejected proposal halves the number of moves; a rejected single move
 * gives way to the next-ranked one.
 *
 * Cost: at most `tries` exact evaluations (default DEFAULT_REFINEMENT_TRIES), plus one O(n^3) dense computation of the move
 * effects per accepted proposal (the products A Q_h^T of the machines a proposal left alone kept from the last, as the
 * caller keeps their QR; on a square dense A from the machines' R alone, `factorsOf`, where Q is never formed); above
 * MAX_REFINED_ROWS rows (or for a non-square A) the refinement is skipped and no 'refined' candidate is listed, so a
 * large advise job costs its candidates' analyses only.
 */
import { MoveEffectsCache, rowMoveEffectsWork, type MachineBasis, type RowMoveEffects } from '../analysis/rowMoveEffects.js';
import type { FactoredMatrix } from '../analysis/conditioning.js';
import type { RowGram } from '../analysis/gramBlocks.js';
import type { SEnds, SEndVectors } from '../analysis/kappaS.js';
import type { Work } from '../cooperative.js';
import { InvalidParameterError } from '../errors.js';
import type { Kernels } from '../linalg/kernels.js';
import type { DenseMachineFactor } from '../machines/machineData.js';
import type { CsrMatrix, DenseMatrix } from '../matrix.js';

/** Largest number of rows the refinement runs on (its move effects use dense n x n factorizations). */
export const MAX_REFINED_ROWS = 2000;
/**
 * Exact kappa(S) evaluations the refinement spends unless told otherwise. More gain little: on dense Gaussian n = 1000
 * in 10, 32 tries lower kappa(S) 1% below 8's for 1.2x the advice's time (docs/performance.md, "The refinement's budget").
 */
export const DEFAULT_REFINEMENT_TRIES = 8;
/** The most tries a caller may ask for (each an exact kappa(S) of at most MAX_REFINED_ROWS rows, and a move-effects pass when kept). */
export const MAX_REFINEMENT_TRIES = 64;

export interface RefinementInput {
  kernels: Kernels;
  a: DenseMatrix | CsrMatrix;
  m: number;
  start: Int32Array;
  startKappaS: number;
  bounds: { lo: number; hi: number };
  /**
   * kappa(S) of an assignment, as the analysis computes it; `near`: eigenvectors of S's ends for the assignment it was
   * proposed from (the move effects' u and v), where a dense evaluation may start its Lanczos runs.
   */
  evaluate: (assignment: Int32Array, near?: SEndVectors) => Work<number>;
  /** Exact evaluations the refinement may spend (0 to MAX_REFINEMENT_TRIES; default DEFAULT_REFINEMENT_TRIES). */
  tries?: number;
  /**
   * The machines' QR of an assignment (the caller's system of it, held or built reusing the machines of those it
   * holds), asked for when the move effects cannot read R alone; undefined: the move effects factor each machine.
   */
  basesWork?: (assignment: Int32Array) => Work<readonly MachineBasis[] | undefined>;
  /**
   * The machines of an assignment with R alone (a square dense A: its evaluation's factors, from the rows' Gram matrix),
   * else undefined: with `factored` and `rowGram` the move effects read R alone (../analysis/rowMoveEffects.ts), no Q.
   */
  factorsOf?: (assignment: Int32Array) => Work<readonly DenseMachineFactor[] | undefined>;
  /** S's ends of an assignment just evaluated, with their Ritz vectors (its evaluation's), else undefined: the move effects' own. */
  endsOf?: (assignment: Int32Array) => SEnds | undefined;
  /** A dense A as some partition of it factored it (../analysis/conditioning.ts FactoredMatrix): the move effects' lambda_min(S) through it. */
  factored?: FactoredMatrix;
  /** A dense square A's rows' Gram matrix (the advisor's row graph's): the move effects' coordinates from it (../analysis/rowMoveEffects.ts). */
  rowGram?: RowGram;
}

export interface Refinement {
  assignment: Int32Array;
  kappaS: number;
  /** Proposals kept. */
  accepted: number;
  evaluations: number;
}

/** Relative gain under which a proposal counts as no gain (the estimates' accuracy). */
const GAIN = 1e-6;

/** The refinement's tries as asked (undefined: DEFAULT_REFINEMENT_TRIES); anything but an integer from 0 to MAX_REFINEMENT_TRIES is refused. */
export function refinementTries(asked: number | undefined): number {
  const tries = asked ?? DEFAULT_REFINEMENT_TRIES;
  if (!Number.isInteger(tries) || tries < 0 || tries > MAX_REFINEMENT_TRIES)
    throw new InvalidParameterError(`refinementTries must be an integer from 0 to ${MAX_REFINEMENT_TRIES}; got ${tries}.`, {
      parameter: 'refinementTries',
      limit: MAX_REFINEMENT_TRIES,
    });
  return tries;
}

/** Whether refineAssignmentWork refines a partition of `a` over m machines (at most MAX_REFINED_ROWS rows, square, m >= 2). */
export function refinementApplies(a: DenseMatrix | CsrMatrix, m: number): boolean {
  return a.rows <= MAX_REFINED_ROWS && a.rows === a.cols && m >= 2;
}

/** null when the refinement does not apply (refinementApplies), is given no tries, or meets a rank-deficient block. */
export function* refineAssignmentWork(input: RefinementInput): Work<Refinement | null> {
  const { kernels, a, m, bounds, evaluate, basesWork, factorsOf, endsOf, factored, rowGram } = input;
  const tries = refinementTries(input.tries);
  if (!refinementApplies(a, m) || tries === 0) return null;
  let assignment: Int32Array = Int32Array.from(input.start);
  let kappaS = input.startKappaS;
  // kappa(S) >= 1, with equality when S = I: nothing to lower.
  if (kappaS <= 1 + GAIN) return { assignment, kappaS, accepted: 0, evaluations: 0 };
  const cache = 'data' in a ? new MoveEffectsCache(a) : undefined;
  // The move effects of an assignment from what the caller has of it (its factors, its S's ends, else its bases).
  function* effectsWork(of: Int32Array, startVectors?: SEndVectors): Work<RowMoveEffects | null> {
    return yield* rowMoveEffectsWork(kernels, a, of, m, {
      basesWork: basesWork === undefined ? undefined : () => basesWork(of),
      factors: factorsOf === undefined ? undefined : yield* factorsOf(of),
      ends: endsOf?.(of),
      factored,
      cache,
      startVectors,
      rowGram,
    });
  }
  let effects = yield* effectsWork(assignment);
  if (effects === null) return null;
  let ranked = rankedMoves(effects, assignment, m);
  let batch = Math.floor(m / 2);
  let skip = 0;
  let evaluations = 0;
  let accepted = 0;
  while (evaluations < tries) {
    const proposal = proposeMoves(assignment, m, ranked, batch, skip, bounds);
    if (proposal === null) break;
    evaluations++;
    const value = yield* evaluate(proposal, effects);
    if (value < kappaS * (1 - GAIN)) {
      assignment = proposal;
      kappaS = value;
      accepted++;
      skip = 0;
      if (evaluations >= tries) break;
      effects = yield* effectsWork(assignment, effects);
      if (effects === null) break;
      ranked = rankedMoves(effects, assignment, m);
    } else if (batch > 1) batch = Math.floor(batch / 2);
    else skip++;
  }
  return { assignment, kappaS, accepted, evaluations };
}

interface Move {
  row: number;
  to: number;
  deltaMax: number;
  deltaMin: number;
  predicted: number;
}

/** Moves whose Rayleigh-Ritz prediction is computed (the first order's best). */
const SHORT_LIST = 64;

/** The moves predicted to lower kappa(S), best first: the first order's short list, re-ranked by Rayleigh-Ritz. */
function rankedMoves(effects: RowMoveEffects, assignment: Int32Array, m: number): Move[] {
  const current = effects.lambdaMax / effects.lambdaMin;
  const refined: Move[] = [];
  const shortList = firstOrderMoves(effects, assignment, m).slice(0, SHORT_LIST);
  const ritzValues = effects.rayleighRitz(shortList);
  for (const [index, move] of shortList.entries()) {
    const ritz = ritzValues[index];
    if (ritz === null || !(ritz.lambdaMin > 0)) continue;
    const predicted = ritz.lambdaMax / ritz.lambdaMin;
    if (predicted < current) refined.push({ ...move, predicted });
  }
  return refined.sort((x, y) => x.predicted - y.predicted || x.row - y.row || x.to - y.to);
}

/** Every move the first order predicts to lower kappa(S), best first. */
function firstOrderMoves(effects: RowMoveEffects, assignment: Int32Array, m: number): Move[] {
  const { lambdaMax, lambdaMin, deltaMax, deltaMin } = effects;
  const current = lambdaMax / lambdaMin;
  const moves: Move[] = [];
  for (let k = 0; k < assignment.length; k++) {
    for (let h = 0; h < m; h++) {
      const dMax = deltaMax[k * m + h];
      const dMin = deltaMin[k * m + h];
      if (Number.isNaN(dMax) || Number.isNaN(dMin) || !(lambdaMin + dMin > 0)) continue;
      const predicted = (lambdaMax + dMax) / (lambdaMin + dMin);
      if (predicted < current) moves.push({ row: k, to: h, deltaMax: dMax, deltaMin: dMin, predicted });
    }
  }
  return moves.sort((x, y) => x.predicted - y.predicted || x.row - y.row || x.to - y.to);
}

/**
 * Up to `batch` moves on pairwise distinct machines, best first after skipping the `skip` best
 * (module comment); a move the bounds forbid goes with the best move back (a swap). null: none left.
 */
function proposeMoves(
  assignment: Int32Array,
  m: number,
  ranked: Move[],
  batch: number,
  skip: number,
  bounds: { lo: number; hi: number },
): Int32Array | null {
  const sizes = new Int32Array(m);
  for (const machine of assignment) sizes[machine]++;
  const busy = new Uint8Array(m);
  const next = Int32Array.from(assignment);
  let taken = 0;
  let skipped = 0;
  for (const move of ranked) {
    if (taken >= batch) break;
    const from = assignment[move.row];
    if (busy[from] || busy[move.to]) continue;
    let back: Move | undefined;
    if (sizes[move.to] >= bounds.hi || sizes[from] <= bounds.lo) {
      back = ranked.find((other) => assignment[other.row] === move.to && other.to === from);
      if (back === undefined) continue;
    }
    if (skipped < skip) {
      skipped++;
      continue;
    }
    next[move.row] = move.to;
    if (back !== undefined) next[back.row] = from;
    busy[from] = 1;
    busy[move.to] = 1;
    taken++;
  }
  return taken === 0 ? null : next;
}
