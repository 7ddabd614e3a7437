/**
 * kappa(S) = lambda_max(S) / lambda_min(S), S = sum_i Q_i Q_i^T = Q Q^T (docs/SPEC.md "Building blocks"):
 * one routine per storage, sConditioningWork for dense machines and csrSSpectrumWork for CSR ones. Every
 * caller (the analysis, its split over workers, the sparse and tall sparse analyses, the studies' cheap
 * path, the partition advisor) passes what it already holds, and that decides how the two ends are had:
 *
 * Dense (sConditioningWork), S is never formed: lambda_min(S) knows only eps lambda_max(S) absolute on a
 * formed S (a few % at kappa(S) ~ 1e14), while Q unsquared keeps sigma_min(Q)'s relative accuracy.
 *  - from the Gram blocks G_ij = Q_i^T Q_j (the analysis builds them for the principal angles), square:
 *    lambda_max(S) by Lanczos on G = Q^T Q (same nonzero spectrum as S) and lambda_min(S) = sigma_min(Q)^2
 *    by Lanczos on S^{-1} = (M^T M)^{-1} = M^{-1} M^{-T}, M = Q^T, through the LU of M. The two ends are
 *    independent: the split analysis runs sSmallestWork on a worker and passes its result to this routine
 *    at the combine step, which holds the Gram blocks. All off-diagonal blocks zero: S = I (Proposition 1);
 *  - from the machines' bases alone (the partition advisor's candidates, which need no angles): lambda_max(S) by
 *    Lanczos through them, lambda_min(S) as from the Gram blocks or, given another partition's factorization of
 *    a square A (A = D M), by Lanczos on S^{-1} = A^{-1} Gb A^{-T} through it (inverseSThroughFactoredOperator):
 *    one factorization for every candidate, where each would factor its own Q^T;
 *  - from the basis rows Q^T themselves (the studies' cheap path, which has each machine's Householder
 *    basis and no Gram blocks; and a tall system, where Q^T is N x n and has no LU): the eigenvalues of S
 *    are the squared singular values of Q^T, the n-th the smallest, by one bidiagonalization (absolute
 *    accuracy a few eps lambda_max(S), lambda_max(S) <= m): a square Q^T in place at once, a tall one by
 *    panels (../linalg/singularValues.ts).
 *
 * CSR (csrSSpectrumWork), from A's rows, the partition (../sparse/spectrumOfS.ts' column slots) and
 * callbacks that solve with each machine's Gram factor L_i (L_i L_i^T = G_i = A_i A_i^T, e.g. a sparse
 * Cholesky with its permutation folded in: L_i = P_i^T L), each end with its error bound:
 *  - lambda_max(S): the nonzero spectrum of S = M^T M, M = Lb^{-1} A (Lb = diag(L_1, ..., L_m)), is that
 *    of S' = M M^T = Lb^{-1} (A A^T) Lb^{-T} (over the rows). Its diagonal blocks L_i^{-1} G_i L_i^{-T}
 *    are the identity, so S' = I + Lb^{-1} E Lb^{-T} with E = A A^T minus its diagonal blocks: the
 *    off-diagonal coupling is computed directly (each row's products with the OTHER machines' rows, by
 *    prefix and suffix sums over the machines sharing a column, never by subtracting the own block),
 *    which keeps the error of S' near eps kappa(L_i) instead of the eps kappa(G_i) = eps kappa(A_i)^2
 *    that forming L_i^{-1} G_i L_i^{-T} would cost;
 *  - lambda_min(S) = 1 / lambda_max(S^{-1}), S^{-1} reached in one of two ways (InverseOfS):
 *    'lu', a square A: S^{-1} = A^{-1} Gb A^{-T} (Gb = diag(G_i) = Lb Lb^T, applied as products
 *      A_i (A_i^T x_i)), shift-invert at 0 through the sparse LU of A. This is similar to
 *      Lb^T A^{-T} A^{-1} Lb = S'^{-1} (X X^T against X^T X, X = A^{-1} Lb), so it has the same
 *      eigenvalues, and it needs no product with L_i: only solves with A. Then, when the machines'
 *      overlap graph (i ~ j when they share a column) is bipartite, as for contiguous strips of a banded
 *      matrix, E has blocks only between the two sides, so with D = diag(+-I_{p_i}) by side, D E D = -E
 *      and S' - I is similar to its negative: S's spectrum is symmetric about 1 and lambda_max(S) =
 *      2 - lambda_min(S) exactly (for m = 2 these are 1 +- cos theta_12). The Lanczos run on S', the
 *      costliest part of the analysis on such systems (its top is a cluster of one eigenvalue per
 *      boundary), is then not needed; the bound is lambda_min's absolute error over lambda_max;
 *    'conjugate-gradients', a tall A (N > n, the machines' row bases stacked: no LU of A, and S' has
 *      N_R - n zero eigenvalues besides S's, so no reflection either): Lanczos on S^{-1}, each product a
 *      conjugate-gradient solve with S (applied as sum_i A_i^T G_i^{-1} A_i, never formed; its condition
 *      number is kappa(S) itself) to a relative residual tau = S_SOLVE_TOLERANCE, after lambda_max(S) by
 *      Lanczos on S'. The inexact inverse is within kappa(S) r of S^{-1} relative (r the largest residual
 *      met), so kappa_hat(S) r is added to lambda_min(S)'s bound.
 * No column shared by two machines: S = I exactly (Proposition 1), no iteration. Error bounds of the
 * Lanczos runs: ../eigen/lanczos.ts (the Ritz residual bound); the dense runs stop on it or after
 * MAX_FORWARD_LANCZOS_ITERATIONS steps (every fixture converges in at most ~210).
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseFactors, DenseMachineFactor, DenseSystem } from '../distributed/distributedSystem.js';
import { DimensionMismatchError, type SingularMatrixError } from '../errors.js';
import {
  eigensolverOptionsOf,
  KrylovWorkspace,
  largestEigenvalueWork,
  lanczosWork,
  smallestEigenvalueByInverseWork,
  type LanczosResult,
  type LargestEigenvalueOptions,
  type SymmetricOperator,
} from '../eigen/lanczos.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { luSolve, luSolveTransposed, luWork } from '../linalg/lu.js';
import { singularValueRangeWork, squareSingularValueRangeInPlace, type SingularValueRange } from '../linalg/singularValues.js';
import type { DenseMatrix } from '../matrix.js';
import { ConjugateGradients } from '../sparse/conjugateGradients.js';
import { conditionNumberEstimate, spectralEstimateOf, type SpectralEstimate } from '../eigen/eigenvalueEstimate.js';
import { typescriptLuSolves, type LuSolves, type SparseLuFactorization } from '../sparse/sparseLu.js';
import { largestMachine, overlapTwoColouring, type GramFactorSolves, type MachineColumnSlots } from '../sparse/spectrumOfS.js';
import {
  inverseLargestWork,
  largestOfInverseWork,
  MAX_FORWARD_LANCZOS_ITERATIONS,
  matrixConditioningWork,
  singularError,
  type FactoredMatrix,
  type MatrixConditioning,
} from './conditioning.js';
import { gramIsIdentity, gramOperator, offsetsOf, type GramBlocks, type RowGram } from './gramBlocks.js';
import { choleskyUpperInPlace } from '../linalg/cholesky.js';
import { inPhase } from './parts.js';

export interface SConditioning {
  lambdaMinS: number;
  lambdaMaxS: number;
  kappaS: number;
  lanczosIterations: { largest: number; smallest: number };
}

/** Eigenvectors of S's ends, u for lambda_max(S) and v for lambda_min(S) (unit norm; Ritz vectors to some accuracy). */
export interface SEndVectors {
  readonly u: Float64Array;
  readonly v: Float64Array;
}

/** S's ends with their Ritz vectors. */
export interface SEnds extends SEndVectors {
  readonly lambdaMax: number;
  readonly lambdaMin: number;
}

/** What the dense kappa(S) reads Q from (module comment): the analysis' Gram blocks and bases, or Q^T itself. */
export type DenseSSource =
  | { readonly system: DenseSystem; readonly gram: GramBlocks }
  /** The split analysis' combine step: the Gram blocks, and lambda_min(S)'s run done on a worker by sSmallestWork. */
  | { readonly gram: GramBlocks; readonly n: number; readonly inverse: LanczosEnd | null }
  /**
   * The machines' bases alone (the partition advisor's candidates, which need kappa(S) and not the angles): lambda_max(S)
   * by Lanczos on S = sum_i Q_i Q_i^T through them, lambda_min(S) as from the Gram blocks; a tall system as from them.
   * On dense n = 4000, m = 10, the Gram blocks cost 9.4 s on the TypeScript backend (0.6 s native) and their Lanczos run
   * 0.4 s, the 17 products through the bases 1.0 s (0.14 s), to the same lambda_max(S).
   */
  | {
      readonly bases: DenseSystem;
      /**
       * A square A factored as another partition of it made it (A = D M, ./conditioning.ts FactoredMatrix): lambda_min(S)
       * through it (inverseSThroughFactoredOperator), with no LU of this partition's Q^T. The partition advisor's
       * candidates share the given partition's.
       */
      readonly factored?: FactoredMatrix;
      /**
       * Where lambda_max(S)'s and lambda_min(S)'s Lanczos runs start (else at random): eigenvectors of S for a nearby
       * partition (the refinement's proposals move a few rows), which they converge from in fewer steps to the same
       * tolerance. v, for lambda_min(S), is read only through `factored`.
       */
      readonly startVectors?: SEndVectors;
    }
  | {
      /** Q^T: its rows the machines' orthonormal basis vectors, one after the other. A square one is overwritten. */
      readonly basisRows: DenseMatrix;
      /** The bidiagonal's buffers for a square Q^T (d of length n, e of max(1, n)), when the caller keeps them between calls. */
      readonly bidiagonal?: { readonly d: Float64Array; readonly e: Float64Array };
    };

/**
 * lambda_min(S), lambda_max(S) and kappa(S) of dense machines (module comment). From the Gram blocks
 * (the analysis) throws SingularMatrixError when Q^T is singular (an exactly zero pivot, or
 * sigma_min(Q) <= N eps sigma_max(Q) on a tall system); from Q^T alone it reports what it finds.
 */
export function* sConditioningWork(kernels: Kernels, source: DenseSSource): Work<SConditioning> {
  if ('basisRows' in source) return yield* sOfBasisRowsWork(kernels, source.basisRows, source.bidiagonal);
  if ('bases' in source) return yield* sOfBasesWork(kernels, source.bases, source.factored, source.startVectors);
  const { gram } = source;
  if (gramIsIdentity(gram)) return S_IDENTITY;
  if ('system' in source && source.system.A.rows > source.system.n) return yield* tallSOfBasesWork(kernels, source.system, gram.offsets);
  const upper = yield* sLargestWork(kernels, gram);
  let lower: LanczosEnd | null;
  if ('system' in source) {
    yield { phase: 'conditioning', fraction: 0.1 };
    lower = yield* sSmallestWork(kernels, source.system, gram.offsets);
  } else {
    lower = source.inverse;
  }
  if (lower === null) throw singularBasesError(upper.largest, 'system' in source ? source.system.n : source.n);
  return sConditioningFrom(upper, lower);
}

/** A tall system's S from its Q^T (N x n: no LU), its rows at `offsets`; SingularMatrixError when sigma_min(Q) <= N eps sigma_max(Q). */
function* tallSOfBasesWork(kernels: Kernels, system: DenseSystem, offsets: readonly number[]): Work<SConditioning> {
  const s = yield* sOfBasisRowsWork(kernels, yield* assembleBasisRowsWork(system, offsets));
  if (!(Math.sqrt(s.lambdaMinS) > system.A.rows * Number.EPSILON * Math.sqrt(s.lambdaMaxS))) {
    throw singularBasesError(s.lambdaMaxS, system.A.rows);
  }
  return s;
}

/** S's ends from the machines' bases alone (DenseSSource's `bases`), lambda_min(S) through `factored` when given. */
function* sOfBasesWork(kernels: Kernels, system: DenseSystem, factored?: FactoredMatrix, startVectors?: SEndVectors): Work<SConditioning> {
  const offsets = offsetsOf(system.machines.map((machine) => machine.p));
  if (system.A.rows > system.n) return yield* tallSOfBasesWork(kernels, system, offsets);
  // No column shared by two machines: S = I (Proposition 1), as the Gram blocks' all zero.
  if (supportsDisjoint(system.machines, system.n)) return S_IDENTITY;
  const sOperator = basesSOperator(kernels, system.machines, system.n);
  const upper = yield* lanczosWork(kernels, sOperator, {
    which: 'largest',
    maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS,
    startVector: startVectors?.u,
  });
  let lower: LanczosEnd | null;
  if (factored === undefined) lower = yield* sSmallestWork(kernels, system, offsets);
  // The factorization of this very partition: lambda_min(S) as the analysis computes it from it.
  else if (factored.machines === system.machines) lower = yield* inverseLargestWork(kernels, factored.basisLu);
  else lower = yield* largestOfInverseWork(kernels, inverseSThroughFactoredOperator(kernels, factored, system.machines), startVectors?.v);
  if (lower === null) throw singularBasesError(upper.largest, system.n);
  return sConditioningFrom(upper, lower);
}

/**
 * kappa(R_i) above which sOfFactorsWork declines: lambda_max(S) through A_i and R_i (factorsSOperator) is accurate to
 * ~kappa(R_i) eps relative (each solve with R_i loses that much), against ~eps through Q_i; at 1e4 the two agree to
 * ~1e-12, within the 1e-9 at which the partition advisor's candidates must equal an analysis of them.
 */
export const FACTORS_ROUTE_MAX_CONDITION = 1e4;

/**
 * x -> S x = sum_i A_i^T (A_i A_i^T)^{-1} A_i x = sum_i A_i^T R_i^{-1} R_i^{-T} A_i x through the machines' rows and R
 * alone (A_i^T = Q_i R_i, so Q_i = A_i^T R_i^{-1}): per machine two matrix-vector products with A_i and two triangular
 * solves, the work of the route through Q_i (basesSOperator). Machines that hold no copy of their rows (on every column:
 * DenseMachineFactor.a null) read them in A itself: S x = A^T P (A x), P the machines' solves on their rows of A x, two
 * products with the whole A a step (the same passes over its entries).
 */
export function factorsSOperator(kernels: Kernels, machines: readonly DenseMachineFactor[], n: number, A: DenseMatrix): SymmetricOperator {
  const dense = kernels.dense;
  const width = Math.max(1, ...machines.map((machine) => machine.p));
  const local = new Float64Array(width);
  const onCols = new Float64Array(n);
  const image = new Float64Array(n);
  if (machines.some(({ a }) => a === null)) {
    // Every row of A belongs to one machine (a square A): P maps A x to the solves' images in A's row order.
    const products = new Float64Array(A.rows);
    const images = new Float64Array(A.rows);
    return {
      size: n,
      apply(x, y) {
        dense.gemm(false, A.rows, 1, n, 1, A.data, n, x, 1, 0, products, 1);
        for (const { p, rows, r } of machines) {
          for (let k = 0; k < p; k++) local[k] = products[rows[k]];
          dense.solveRTransposedBlock(r, p, local, 1);
          dense.solveRBlock(r, p, local, 1);
          for (let k = 0; k < p; k++) images[rows[k]] = local[k];
        }
        dense.gemm(true, n, 1, A.rows, 1, A.data, n, images, 1, 0, y, 1);
      },
    };
  }
  return {
    size: n,
    apply(x, y) {
      y.fill(0);
      for (const { p, c, cols, full, a, r } of machines) {
        const xc = full ? x : onCols;
        if (!full) for (let s = 0; s < c; s++) onCols[s] = x[cols[s]];
        dense.gemm(false, p, 1, c, 1, a!, c, xc, 1, 0, local, 1);
        dense.solveRTransposedBlock(r, p, local, 1);
        dense.solveRBlock(r, p, local, 1);
        dense.gemm(true, c, 1, p, 1, a!, c, local, 1, 0, image, 1);
        if (full) for (let s = 0; s < n; s++) y[s] += image[s];
        else for (let s = 0; s < c; s++) y[cols[s]] += image[s];
      }
    },
  };
}

/**
 * An estimate of kappa(R) (R p x p upper triangular, row-major) from below: the square roots of the largest eigenvalues
 * of R^T R and (R^T R)^{-1} = R^{-1} R^{-T} by a few power steps each (Rayleigh quotients: each at most its eigenvalue,
 * within a small factor of it after a few steps from a start with every component).
 */
export function triangularConditionEstimate(kernels: Kernels, r: Float64Array, p: number, steps = 8): number {
  const dense = kernels.dense;
  const t = new Float64Array(p);
  const norm = largestByPowerSteps(p, steps, (v) => {
    dense.gemm(false, p, 1, p, 1, r, p, v, 1, 0, t, 1);
    dense.gemm(true, p, 1, p, 1, r, p, t, 1, 0, v, 1);
  });
  return norm * triangularInverseNormEstimate(kernels, r, p, steps);
}

/** An estimate of |R^{-1}|_2 from below, as triangularConditionEstimate makes it. */
export function triangularInverseNormEstimate(kernels: Kernels, r: Float64Array, p: number, steps = 8): number {
  const dense = kernels.dense;
  return largestByPowerSteps(p, steps, (v) => {
    dense.solveRTransposedBlock(r, p, v, 1);
    dense.solveRBlock(r, p, v, 1);
  });
}

/** The square root of the largest eigenvalue of a symmetric positive semidefinite map (p x p, in place) by power steps. */
function largestByPowerSteps(p: number, steps: number, applyNormal: (v: Float64Array) => void): number {
  const x = new Float64Array(p);
  const before = new Float64Array(p);
  for (let k = 0; k < p; k++) x[k] = 1 + ((k * 0.618033988749895) % 1);
  let value = 0;
  for (let step = 0; step < steps; step++) {
    let norm = 0;
    for (let k = 0; k < p; k++) norm += x[k] * x[k];
    norm = Math.sqrt(norm);
    if (!(norm > 0 && Number.isFinite(norm))) return Infinity;
    for (let k = 0; k < p; k++) before[k] = x[k] /= norm;
    applyNormal(x);
    value = 0;
    for (let k = 0; k < p; k++) value += before[k] * x[k];
  }
  return Math.sqrt(value);
}

/**
 * Largest estimated relative error of a machine's A_i A_i^T taken from the rows' Gram matrix under which its Cholesky
 * factor serves as its R (triangularFactorFromRowGram): lambda_max(S) and lambda_min(S) through it then agree with the
 * QR's R's to about that each, kappa(S) to ~4e-10, within the 1e-9 at which the partition advisor's candidates must
 * equal an analysis of them (measured: 3e-14, dense n = 2000, m = 10, mean 1). The Gaussian machines of dense n = 4000,
 * m = 10 (mean 1) estimate 7.4e-11 to 1.04e-10.
 */
const ROW_GRAM_FACTOR_MARGIN = 2e-10;

/**
 * A machine's R with R^T R = A_i A_i^T (its rows, ascending) from the rows' Gram matrix (the advisor's, ./gramBlocks.ts
 * RowGram): the Cholesky factor of its normalized p x p block, columns scaled by the rows' norms; p^3 / 3 multiply-adds
 * where the QR of A_i^T costs ~2 p^2 n. It equals the QR's R up to the signs of its rows (S reads R^T R only), to the
 * Gram matrix's rounding: its entries are dot products of unit rows of length n, off by ~sqrt(n) eps in the usual case,
 * so the p x p block by ~p sqrt(n) eps, which (R^T R)^{-1} (what S = A^T diag(R_i^T R_i)^{-1} A reads) turns into a
 * relative error of ~p sqrt(n) eps |Rbar^{-1}|^2, Rbar the normalized factor. null when that exceeds
 * ROW_GRAM_FACTOR_MARGIN (|Rbar^{-1}| estimated from below within ~2x: a factor 4 over it) or the block is not
 * numerically positive definite: the caller takes the QR.
 */
export function triangularFactorFromRowGram(kernels: Kernels, gram: RowGram, rows: Int32Array): Float64Array | null {
  const { rows: n, normalized, rowNorms } = gram;
  const p = rows.length;
  const r = new Float64Array(p * p);
  // The upper triangle only (the factorization reads no other): p^2 / 2 scattered reads of the n x n matrix.
  for (let s = 0; s < p; s++) {
    const from = rows[s] * n;
    for (let l = s; l < p; l++) r[s * p + l] = normalized[from + rows[l]];
  }
  if (!choleskyUpperInPlace(kernels, r, p)) return null;
  const inverseNorm = triangularInverseNormEstimate(kernels, r, p);
  if (!(4 * p * Math.sqrt(n) * Number.EPSILON * inverseNorm * inverseNorm <= ROW_GRAM_FACTOR_MARGIN)) return null;
  for (let s = 0; s < p; s++) for (let l = s; l < p; l++) r[s * p + l] *= rowNorms[rows[l]];
  return r;
}

/**
 * Relative error of lambda_max(S) and lambda_min(S) (their Ritz values' Kato-Temple bounds) at which sOfFactorsWork
 * stops its Lanczos runs: kappa(S) to ~2e-12, far within the 1e-9 at which the partition advisor's candidates must
 * equal an analysis of them, where the analysis' residual test (1e-13) takes about twice the steps (dense n = 4000,
 * m = 10: 17 and 10 steps).
 */
const FACTORS_ROUTE_VALUE_TOLERANCE = 1e-12;

/**
 * S's ends for a square dense partition from its machines' R alone (DenseFactors, Q_i not formed), each to
 * FACTORS_ROUTE_VALUE_TOLERANCE: lambda_max(S) by Lanczos through factorsSOperator, lambda_min(S) through another
 * partition's factorization of A (the operator sOfBasesWork takes with `factored`, from the same Gb = diag(R_j^T R_j)).
 * null when some R_i's condition exceeds FACTORS_ROUTE_MAX_CONDITION: the caller then forms Q (sConditioningWork with
 * `bases`).
 */
export function* sOfFactorsWork(
  kernels: Kernels,
  factors: DenseFactors,
  factored: FactoredMatrix,
  startVectors?: SEndVectors,
): Work<SConditioning | null> {
  return (yield* sEndsOfFactorsWork(kernels, factors, factored, startVectors, false))?.conditioning ?? null;
}

/**
 * sOfFactorsWork, and with `vectors` the two runs' Ritz vectors (`ends`; null for S = I, of disjoint supports): the
 * partition refinement's move effects read them for the proposal it accepts (../analysis/rowMoveEffects.ts `ends`).
 */
export function* sEndsOfFactorsWork(
  kernels: Kernels,
  factors: DenseFactors,
  factored: FactoredMatrix,
  startVectors?: SEndVectors,
  vectors = true,
): Work<{ conditioning: SConditioning; ends: SEnds | null } | null> {
  const { machines, n } = factors;
  for (const { r, p } of machines) {
    if (!(triangularConditionEstimate(kernels, r, p) <= FACTORS_ROUTE_MAX_CONDITION)) return null;
    yield undefined;
  }
  if (supportsDisjoint(machines, n)) return { conditioning: S_IDENTITY, ends: null };
  const u = vectors ? new Float64Array(n) : undefined;
  const v = vectors ? new Float64Array(n) : undefined;
  const upper = yield* lanczosWork(kernels, factorsSOperator(kernels, machines, n, factors.A), {
    which: 'largest',
    maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS,
    startVector: startVectors?.u,
    valueTolerance: FACTORS_ROUTE_VALUE_TOLERANCE,
    ritzVector: u,
  });
  const lower = yield* largestOfInverseWork(
    kernels,
    inverseSThroughFactoredOperator(kernels, factored, machines),
    startVectors?.v,
    FACTORS_ROUTE_VALUE_TOLERANCE,
    v,
  );
  if (lower === null) throw singularBasesError(upper.largest, n);
  const conditioning = sConditioningFrom(upper, lower);
  const ends = u === undefined || v === undefined ? null : { u, v, lambdaMax: conditioning.lambdaMaxS, lambdaMin: conditioning.lambdaMinS };
  return { conditioning, ends };
}

/**
 * Whether a partition's kappa(S) through another partition's factorization of A (inverseSThroughFactoredOperator:
 * S^{-1} = A^{-1} Gb A^{-T}) stands for the one its own Q^T gives (the analysis' route). That route's solves with A lose
 * about kappa(A^T A) / kappa(S) eps beyond it: a machine holding nearly dependent rows makes A far worse conditioned
 * than S (measured: rows 1e-7 apart, kappa(A^T A) = 2.7e17, kappa(S) ~1e4, the two routes 7e-5 to 1.5e-3 apart). And
 * where kappa(S) eps itself is large, no route has those digits, and two of them differ arbitrarily. Within these
 * bounds the advisor's candidates agree with an analysis of them to 1e-9 (its tests).
 */
export function factoredRouteStands(kappaS: number, kappaAtA: number): boolean {
  return (Number.EPSILON * kappaAtA) / kappaS <= 1e-10 && Number.EPSILON * kappaS <= 1e-3;
}

/** A machine's R (p x p, upper triangular, row-major) with A_i^T = Q_i R, and its rows of A. */
export interface TriangularFactor {
  readonly p: number;
  readonly r: Float64Array;
  readonly rows: Int32Array;
}

/**
 * x -> S^{-1} x for the partition of `machines`, square A: S = A^T Gb^{-1} A (Q_j^T = R_j^{-T} A_j, Gb = diag(A_j A_j^T)
 * = diag(R_j^T R_j) in A's row order), so S^{-1} = A^{-1} Gb A^{-T}, and A^{-1} comes from another partition's
 * factorization of the same A, P A = D M (./conditioning.ts FactoredMatrix: the LU of M and that partition's R_i):
 * A^{-T} = P^T D^{-T} M^{-T}, A^{-1} = M^{-1} D^{-1} P. Gb's blocks are formed once (p_j^3 each); each product is
 * then two solves with the LU of M, two triangular solves with each R_i and one product with each block (sum p^2
 * each against n^2), where the route through this partition's own Q^T factors it first (2/3 n^3). Normwise backward
 * stable as that route, A being factored as (D + dD)(M + dM) (./conditioning.ts), but its solves with A lose about
 * kappa(A^T A) / kappa(S) eps more than that route: factoredRouteStands says when that is negligible.
 */
export function inverseSThroughFactoredOperator(
  kernels: Kernels,
  factored: FactoredMatrix,
  machines: readonly TriangularFactor[],
): SymmetricOperator {
  const { basisLu, offsets } = factored;
  const n = basisLu.n;
  const dense = kernels.dense;
  const grouped = new Float64Array(n);
  const inRowOrder = new Float64Array(n);
  const work = new Float64Array(n);
  const width = Math.max(1, ...machines.map((machine) => machine.p), ...factored.machines.map((machine) => machine.p));
  const block = new Float64Array(width);
  const image = new Float64Array(width);
  // Gb's blocks R_j^T R_j = A_j A_j^T formed once (p_j^3 each): each product is then one matrix-vector product a machine.
  const grams = machines.map(({ p, r }) => {
    const g = new Float64Array(p * p);
    dense.gemm(true, p, p, p, 1, r, p, r, p, 0, g, p);
    return g;
  });
  return {
    size: n,
    apply(x, y) {
      // A^{-T} x: M^{-T}, then D^{-T} (R_i u_i = t_i), then P^T.
      luSolveTransposed(basisLu, x, grouped, work);
      for (const { r, p, index, rows } of factored.machines) {
        const offset = offsets[index];
        block.set(grouped.subarray(offset, offset + p));
        dense.solveRBlock(r, p, block, 1);
        for (let k = 0; k < p; k++) inRowOrder[rows[k]] = block[k];
      }
      // Gb z on each machine's rows.
      for (const [j, { p, rows }] of machines.entries()) {
        for (let k = 0; k < p; k++) block[k] = inRowOrder[rows[k]];
        dense.gemm(false, p, 1, p, 1, grams[j], p, block, 1, 0, image, 1);
        for (let k = 0; k < p; k++) inRowOrder[rows[k]] = image[k];
      }
      // A^{-1}: P, then D^{-1} (R_i^T v_i = u_i), then M^{-1}.
      for (const { r, p, index, rows } of factored.machines) {
        const offset = offsets[index];
        for (let k = 0; k < p; k++) block[k] = inRowOrder[rows[k]];
        dense.solveRTransposedBlock(r, p, block, 1);
        grouped.set(block.subarray(0, p), offset);
      }
      luSolve(basisLu, grouped, y, work);
    },
  };
}

/** One machine's orthonormal basis of R(A_i) as S's products read it: row t of q (p x cols.length) on the columns `cols`. */
export interface BasisRows {
  readonly p: number;
  readonly cols: Int32Array;
  readonly q: Float64Array;
}

/** Q_i^T x (out[0 .. p)) from x over all n columns: x's coordinates in the machine's basis. */
export function basisCoordinates(basis: BasisRows, x: Float64Array, out: Float64Array): Float64Array {
  const { p, cols, q } = basis;
  const c = cols.length;
  for (let t = 0; t < p; t++) {
    let dot = 0;
    for (let s = 0; s < c; s++) dot += q[t * c + s] * x[cols[s]];
    out[t] = dot;
  }
  return out;
}

/** Whether no column is shared by two of the machines. */
function supportsDisjoint(bases: readonly { readonly cols: Int32Array }[], n: number): boolean {
  const used = new Uint8Array(n);
  for (const { cols } of bases)
    for (const col of cols) {
      if (used[col]) return false;
      used[col] = 1;
    }
  return true;
}

/**
 * x -> S x = sum_i Q_i (Q_i^T x) over R^n through the machines' bases (never formed): a machine touching every column
 * by the kernels' normalProduct on its contiguous rows, the others on their columns.
 */
export function basesSOperator(kernels: Kernels, bases: readonly BasisRows[], n: number): SymmetricOperator {
  const local = new Float64Array(Math.max(1, ...bases.map((basis) => basis.p)));
  const image = new Float64Array(n);
  return {
    size: n,
    apply(x, y) {
      y.fill(0);
      for (const { p, cols, q } of bases) {
        const c = cols.length;
        if (c === n) {
          kernels.dense.normalProduct(q, p, n, x, image, local);
          for (let s = 0; s < n; s++) y[s] += image[s];
          continue;
        }
        basisCoordinates({ p, cols, q }, x, local);
        for (let t = 0; t < p; t++) for (let s = 0; s < c; s++) y[cols[s]] += q[t * c + s] * local[t];
      }
    },
  };
}

/**
 * X -> (S X^T)^T for r vectors of R^n given as the rows of X (r x n, row-major), S = sum_i Q_i Q_i^T through the
 * machines' bases: per machine T = X_i Q_i^T (r x p, X_i X's columns the machine touches) and X_i's image T Q_i, two
 * products by the kernels (Q_i transposed once, on the first call).
 */
export function basesSBlockProduct(kernels: Kernels, bases: readonly BasisRows[]): (x: Float64Array, r: number, n: number) => Float64Array {
  let transposes: Float64Array[] | null = null;
  return (x, r, n) => {
    transposes ??= bases.map(({ p, cols, q }) => {
      const c = cols.length;
      const qt = new Float64Array(c * p);
      for (let t = 0; t < p; t++) for (let s = 0; s < c; s++) qt[s * p + t] = q[t * c + s];
      return qt;
    });
    const y = new Float64Array(r * n);
    for (const [i, { p, cols, q }] of bases.entries()) {
      const c = cols.length;
      let xi = x;
      if (c !== n) {
        xi = new Float64Array(r * c);
        for (let j = 0; j < r; j++) for (let s = 0; s < c; s++) xi[j * c + s] = x[j * n + cols[s]];
      }
      const t = new Float64Array(r * p);
      kernels.dense.multiplyByTransposeRows(xi, q, c, 0, r, p, t, p);
      const image = new Float64Array(r * c);
      kernels.dense.multiplyByTransposeRows(t, transposes[i], p, 0, r, c, image, c);
      if (c === n) for (let k = 0; k < r * n; k++) y[k] += image[k];
      else for (let j = 0; j < r; j++) for (let s = 0; s < c; s++) y[j * n + cols[s]] += image[j * c + s];
    }
    return y;
  };
}

/** S's ends as the squared extreme singular values of Q^T (module comment). */
function* sOfBasisRowsWork(
  kernels: Kernels,
  basisRows: DenseMatrix,
  bidiagonal?: { readonly d: Float64Array; readonly e: Float64Array },
): Work<SConditioning> {
  const { rows, cols, data } = basisRows;
  let range: SingularValueRange;
  if (rows === cols) {
    const d = bidiagonal?.d ?? new Float64Array(cols);
    const e = bidiagonal?.e ?? new Float64Array(Math.max(1, cols));
    range = squareSingularValueRangeInPlace(kernels, data, cols, d, e);
  } else {
    range = yield* singularValueRangeWork(kernels, data, rows, cols);
  }
  const lambdaMaxS = range.largest * range.largest;
  const lambdaMinS = range.smallest * range.smallest;
  return { lambdaMinS, lambdaMaxS, kappaS: lambdaMaxS / lambdaMinS, lanczosIterations: { largest: 0, smallest: 0 } };
}

export function computeSConditioning(system: DenseSystem, gram: GramBlocks, kernels: Kernels = selectedKernels()): SConditioning {
  return runSync(sConditioningWork(kernels, { system, gram }));
}

/** Q^T (N x n, row-major): row offsets[i] + k is the k-th basis vector of R(A_i), on C_i (zero for a dependent row). */
export function* assembleBasisRowsWork(system: DenseSystem, offsets: readonly number[]): Work<DenseMatrix> {
  const n = system.n;
  const rows = system.A.rows;
  const data = new Float64Array(rows * n);
  yield undefined;
  for (const machine of system.machines) {
    const { p, c, q, cols } = machine;
    const base = offsets[machine.index];
    for (let k = 0; k < p; k++) {
      const row = (base + k) * n;
      const src = k * c;
      for (let t = 0; t < c; t++) data[row + cols[t]] = q[src + t];
      if ((k & 127) === 127) yield undefined;
    }
  }
  return { rows, cols: n, data };
}

/** kappa(S) = 1: every off-diagonal Gram block is zero (Proposition 1). */
const S_IDENTITY: SConditioning = { lambdaMinS: 1, lambdaMaxS: 1, kappaS: 1, lanczosIterations: { largest: 0, smallest: 0 } };

/** lambda_max(S) = lambda_max(G): Lanczos on the Gram blocks. */
function* sLargestWork(kernels: Kernels, gram: GramBlocks): Work<LanczosResult> {
  return yield* lanczosWork(kernels, gramOperator(kernels, gram), { which: 'largest', maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS });
}

/**
 * A square system's A = D M (./conditioning.ts): the LU of M = Q^T (rows at the Gram blocks' offsets),
 * which gives kappa(A^T A) (matrixConditioningWork) and lambda_min(S) (inverseLargestWork) alike.
 */
export function* basisFactoredMatrixWork(kernels: Kernels, system: DenseSystem): Work<FactoredMatrix> {
  const offsets = offsetsOf(system.machines.map((machine) => machine.p));
  const basisLu = yield* luWork(kernels, yield* assembleBasisRowsWork(system, offsets), { inPlace: true });
  return { basisLu, machines: system.machines, offsets };
}

/** kappa(A^T A) of a square system through the LU of its bases (basisFactoredMatrixWork; a tall one through its own), as every dense analysis path runs it. */
export function* squareMatrixConditioningWork(kernels: Kernels, system: DenseSystem): Work<MatrixConditioning> {
  if (system.A.rows !== system.n) return yield* matrixConditioningWork(kernels, system.A);
  return yield* matrixConditioningWork(kernels, system.A, yield* basisFactoredMatrixWork(kernels, system));
}

/**
 * 1 / lambda_min(S) = lambda_max((Q Q^T)^{-1}) through the LU of Q^T (rows placed at `offsets`);
 * null when the LU meets an exactly zero pivot (sConditioningWork then throws, naming lambda_max(S),
 * which the split analysis has only at its combine step).
 */
export function* sSmallestWork(kernels: Kernels, system: DenseSystem, offsets: readonly number[]): Work<LanczosResult | null> {
  const basisRows = yield* assembleBasisRowsWork(system, offsets);
  const f = yield* luWork(kernels, basisRows, { inPlace: true });
  if (f.zeroPivotColumn >= 0) return null;
  yield { phase: 'conditioning', fraction: 0.6 };
  // Q^T = M: eigenvalues of S = Q Q^T = M^T M, and (M^T M)^{-1} = M^{-1} M^{-T}.
  return yield* inverseLargestWork(kernels, f);
}

function singularBasesError(lambdaMaxS: number, n: number): SingularMatrixError {
  return singularError("matrix of all machines' bases Q", Math.sqrt(lambdaMaxS), 0, n);
}

/** What kappa(S) takes of a Lanczos run (the split analysis ships only these between workers). */
export type LanczosEnd = Pick<LanczosResult, 'largest' | 'iterations'>;

/** kappa(S) and its extreme eigenvalues from the two Lanczos runs. */
function sConditioningFrom(upper: LanczosEnd, inverse: LanczosEnd): SConditioning {
  const lambdaMaxS = upper.largest;
  return {
    lambdaMinS: 1 / inverse.largest,
    lambdaMaxS,
    kappaS: lambdaMaxS * inverse.largest,
    lanczosIterations: { largest: upper.iterations, smallest: inverse.iterations },
  };
}

export interface SSpectrum {
  lambdaMaxS: SpectralEstimate;
  lambdaMinS: SpectralEstimate;
  kappaS: SpectralEstimate;
}

/** S = I exactly when no column is shared (Proposition 1): no iteration needed. */
const IDENTITY_ESTIMATE: SpectralEstimate = { value: 1, method: 'structural', relativeErrorBound: 0, iterations: 0, converged: true };

/** How csrSSpectrumWork reaches S^{-1} for lambda_min(S) (module comment). */
export type InverseOfS =
  /** A square A: shift-invert through its sparse LU (its solves: the TypeScript ones unless given); lambda_max(S) by reflection when it can. */
  | {
      readonly kind: 'lu';
      readonly lu: SparseLuFactorization;
      readonly luSolves?: LuSolves;
      /** lambda_min(S) already computed through this LU with the same options (the advisor's bounds pass): not computed again. */
      readonly lambdaMinS?: SpectralEstimate;
    }
  /** A tall A: conjugate-gradient solves with S, made on first use (S applied as sum_i A_i^T G_i^{-1} A_i). */
  | { readonly kind: 'conjugate-gradients'; readonly s: () => SymmetricOperator };

/** Relative residual of the conjugate-gradient solves with S inside lambda_min(S)'s Lanczos run. */
export const S_SOLVE_TOLERANCE = 1e-12;

/**
 * lambda_max(S), lambda_min(S) and kappa(S) = lambda_max / lambda_min of CSR machines, each with its
 * bound (module comment): lambda_min(S) through the LU, then lambda_max(S) by reflection or Lanczos on S';
 * or, by conjugate gradients, lambda_max(S) first (lambda_min's bound needs it).
 */
export function* csrSSpectrumWork(
  slots: MachineColumnSlots,
  factors: GramFactorSolves,
  inverse: InverseOfS,
  options: LargestEigenvalueOptions = {},
  workspace: KrylovWorkspace = new KrylovWorkspace(),
): Work<SSpectrum> {
  if (inverse.kind === 'conjugate-gradients') {
    const lambdaMaxS = yield* inPhase(lambdaMaxSWork(slots, factors, options, workspace), 'conditioning', 0, 0.5);
    yield { phase: 'conditioning', fraction: 0.5 };
    const lambdaMinS = slots.blockDiagonal
      ? IDENTITY_ESTIMATE
      : yield* inPhase(lambdaMinSByConjugateGradientsWork(inverse.s(), lambdaMaxS.value, options, workspace), 'conditioning', 0.5, 1);
    return { lambdaMaxS, lambdaMinS, kappaS: conditionNumberEstimate(lambdaMaxS, lambdaMinS) };
  }
  const lambdaMinS = inverse.lambdaMinS ?? (yield* lambdaMinSWork(slots, inverse.lu, options, workspace, inverse.luSolves));
  yield { phase: 'conditioning', fraction: 0.5 };
  const lambdaMaxS = lambdaMaxSByReflection(slots)
    ? reflectedLambdaMax(lambdaMinS)
    : yield* lambdaMaxSWork(slots, factors, options, workspace);
  const kappaS = conditionNumberEstimate(lambdaMaxS, lambdaMinS);
  return { lambdaMaxS, lambdaMinS, kappaS };
}

/** csrSSpectrumWork through the LU of a square A, on the selected backend's kernels unless `options` names others. */
export function sSpectrum(
  slots: MachineColumnSlots,
  factors: GramFactorSolves,
  lu: SparseLuFactorization,
  options: LargestEigenvalueOptions = {},
): SSpectrum {
  return runSync(csrSSpectrumWork(slots, factors, { kind: 'lu', lu }, { ...eigensolverOptionsOf(selectedKernels()), ...options }));
}

/** lambda_min(S) by Lanczos on S^{-1} through conjugate gradients (module comment), its bound widened by the solves' error. */
function* lambdaMinSByConjugateGradientsWork(
  s: SymmetricOperator,
  lambdaMaxS: number,
  options: LargestEigenvalueOptions,
  workspace: KrylovWorkspace,
): Work<SpectralEstimate> {
  const solver = new ConjugateGradients(s, S_SOLVE_TOLERANCE);
  let largestResidual = 0;
  let solvesConverged = true;
  const inverse = {
    size: s.size,
    apply(x: Float64Array, y: Float64Array) {
      const result = solver.solve(x, y);
      largestResidual = Math.max(largestResidual, result.relativeResidual);
      solvesConverged &&= result.converged;
    },
  };
  const bottom = spectralEstimateOf(yield* smallestEigenvalueByInverseWork(inverse, options, workspace));
  const solveError = (lambdaMaxS / bottom.value) * largestResidual;
  return {
    ...bottom,
    method: bottom.method === 'lanczos-exhaustive' ? 'lanczos-exhaustive' : 'lanczos-shift-invert',
    relativeErrorBound: solveError < 1 ? (bottom.relativeErrorBound + solveError) / (1 - solveError) : Infinity,
    converged: bottom.converged && solvesConverged,
  };
}

/** Whether lambda_max(S) is had as 2 - lambda_min(S): machines that overlap, on a bipartite overlap graph (module comment, 'lu'). */
export function lambdaMaxSByReflection(slots: MachineColumnSlots): boolean {
  return !slots.blockDiagonal && overlapTwoColouring(slots) !== null;
}

/**
 * lambda_max(S) = 2 - lambda_min(S) on a bipartite overlap graph (module comment, 'lu'). With
 * |l_hat - l| <= r l for lambda_min: |lambda_max_hat - lambda_max| = |l_hat - l| <= r l_hat / (1 - r),
 * over lambda_max >= lambda_max_hat minus that; plus the rounding of the subtraction.
 */
export function reflectedLambdaMax(lambdaMinS: SpectralEstimate): SpectralEstimate {
  const r = lambdaMinS.relativeErrorBound;
  const value = 2 - lambdaMinS.value;
  const absolute = r < 1 ? (r * lambdaMinS.value) / (1 - r) : Infinity;
  const relativeErrorBound = absolute < value ? absolute / (value - absolute) + Number.EPSILON : Infinity;
  return { value, method: 'bipartite-reflection', relativeErrorBound, iterations: 0, converged: lambdaMinS.converged };
}

/**
 * Entries of A by row, as the slot loops read them: the k-th listed row is rows[k], its entries from rowStart[k] to
 * rowStart[k + 1], each with its value and slot. All of A's (allEntries), or the coupling ones (CouplingEntries).
 */
interface EntriesByRow {
  readonly rows: Int32Array;
  readonly rowStart: Int32Array;
  readonly value: Float64Array;
  readonly slot: Int32Array;
}

/** Every entry of A, in its own arrays (no copy). */
function allEntries(slots: MachineColumnSlots): EntriesByRow {
  const rows = new Int32Array(slots.a.rows);
  for (let r = 0; r < rows.length; r++) rows[r] = r;
  return { rows, rowStart: slots.a.rowPtr, value: slots.a.values, slot: slots.slotOfEntry };
}

/** s[slot] += sum over the listed entries of (column, machine) of a_rc u_r: each machine's A_i^T u_i, column by column. */
function accumulateSlots({ rows, rowStart, value, slot }: EntriesByRow, u: Float64Array, s: Float64Array): void {
  for (let k = 0; k < rows.length; k++) {
    const ur = u[rows[k]];
    if (ur === 0) continue;
    for (let q = rowStart[k]; q < rowStart[k + 1]; q++) s[slot[q]] += value[q] * ur;
  }
}

/**
 * ex[slot] = the sum of s over the OTHER slots of the same column (the other machines' A_j^T u_j at
 * that column), from a prefix and a suffix sum: no subtraction, so no cancellation against the own term. Over
 * `columns`, the shared ones (a column of one slot has no other machine's term).
 */
function excludeOwnSlots(slotPtr: Int32Array, columns: Int32Array, s: Float64Array, ex: Float64Array): void {
  for (let k = 0; k < columns.length; k++) {
    const c = columns[k];
    const begin = slotPtr[c];
    const end = slotPtr[c + 1];
    let prefix = 0;
    for (let t = begin; t < end; t++) {
      ex[t] = prefix;
      prefix += s[t];
    }
    let suffix = 0;
    for (let t = end - 1; t >= begin; t--) {
      ex[t] += suffix;
      suffix += s[t];
    }
  }
}

/** y_r = sum over the listed entries of row r of a_rc slotValues[slot(r, c)], for each listed row (the others untouched). */
function rowsTimesSlots({ rows, rowStart, value, slot }: EntriesByRow, slotValues: Float64Array, y: Float64Array): void {
  for (let k = 0; k < rows.length; k++) {
    let acc = 0;
    for (let q = rowStart[k]; q < rowStart[k + 1]; q++) acc += value[q] * slotValues[slot[q]];
    y[rows[k]] = acc;
  }
}

/**
 * One pass of the machines' factor solves over the rows: each machine's rows of `from`, solved with L_i^{-T}
 * (`transposed`) or L_i^{-1}, written to the same rows of `to`. Each machine's solve reads and writes its own rows
 * only, so a pass can run its machines on several threads (./scaledGramShard.ts) with the same result.
 */
export type MachineSolvesPass = (transposed: boolean, from: Float64Array, to: Float64Array) => void;

/** The pass on the calling thread, machine after machine. */
export function machineSolvesPass(slots: MachineColumnSlots, factors: GramFactorSolves): MachineSolvesPass {
  const local = new Float64Array(largestMachine(slots));
  return (transposed, from, to) => {
    slots.rowsOfMachine.forEach((rows, i) => solveMachineRows(factors, i, rows, transposed, from, to, local));
  };
}

/** Machine i's share of a MachineSolvesPass: its rows of `from`, solved in `scratch`, written to its rows of `to`. */
export function solveMachineRows(
  factors: GramFactorSolves,
  i: number,
  rows: Int32Array,
  transposed: boolean,
  from: Float64Array,
  to: Float64Array,
  scratch: Float64Array,
): void {
  const p = rows.length;
  const x = scratch.subarray(0, p);
  for (let k = 0; k < p; k++) x[k] = from[rows[k]];
  if (transposed) factors.solveLT(i, x, x);
  else factors.solveL(i, x, x);
  for (let k = 0; k < p; k++) to[rows[k]] = x[k];
}

/**
 * The entries of A in columns that two or more machines share, by row: E = A A^T minus its diagonal blocks reads only
 * these (the other machines' A_j^T u_j is 0 at a column no other machine has). On partitions of a grid into strips or
 * boxes they are a boundary's worth of A's entries, so S''s products touch them alone on the calling thread (the
 * machines' solves aside), copied in row order with their slots. When they are most of A (rows dealt at random), A's
 * own rows serve instead, and no copy is made: an entry of an unshared column then meets ex = 0.
 */
interface CouplingEntries extends EntriesByRow {
  /** The shared columns, ascending. */
  readonly columns: Int32Array;
  /** A's own rows (every entry), as above. */
  readonly whole: boolean;
}

function couplingEntriesOf(slots: MachineColumnSlots): CouplingEntries {
  const { rowPtr, colIdx, values } = slots.a;
  const { slotPtr, slotOfEntry } = slots;
  const n = slots.a.rows;
  const sharedColumn = new Uint8Array(slots.a.cols);
  const columns: number[] = [];
  for (let c = 0; c < slots.a.cols; c++)
    if (slotPtr[c + 1] - slotPtr[c] > 1) {
      sharedColumn[c] = 1;
      columns.push(c);
    }
  let count = 0;
  for (let p = 0; p < rowPtr[n]; p++) count += sharedColumn[colIdx[p]];
  if (2 * count > rowPtr[n]) return { ...allEntries(slots), columns: Int32Array.from(columns), whole: true };
  const rows: number[] = [];
  const rowStart: number[] = [0];
  const value = new Float64Array(count);
  const slot = new Int32Array(count);
  let q = 0;
  for (let r = 0; r < n; r++) {
    const before = q;
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++)
      if (sharedColumn[colIdx[p]] === 1) {
        value[q] = values[p];
        slot[q++] = slotOfEntry[p];
      }
    if (q > before) {
      rows.push(r);
      rowStart.push(q);
    }
  }
  return { rows: Int32Array.from(rows), rowStart: Int32Array.from(rowStart), value, slot, columns: Int32Array.from(columns), whole: false };
}

/**
 * S' = Lb^{-1} (A A^T) Lb^{-T} = I + Lb^{-1} E Lb^{-T} (module comment) as an operator over the rows, its factor
 * solves those of `solves` on the calling thread, or a pass of them (./scaledGramShard.ts: on several threads). E is
 * applied through the coupling entries alone (CouplingEntries), each slot's and row's sum taken in the order the whole
 * rows would give it.
 */
export function scaledGramOperator(slots: MachineColumnSlots, solves: GramFactorSolves | MachineSolvesPass): SymmetricOperator {
  const pass = typeof solves === 'function' ? solves : machineSolvesPass(slots, solves);
  const n = slots.a.rows;
  const nSlots = slots.slotMachine.length;
  const { slotPtr } = slots;
  const coupling = couplingEntriesOf(slots);
  const { columns, whole } = coupling;
  const s = new Float64Array(nSlots);
  const ex = new Float64Array(nSlots);
  const u = new Float64Array(n);
  // Rows without a coupling entry stay 0.
  const t = new Float64Array(n);
  return {
    size: n,
    apply(v, out) {
      pass(true, v, u);
      // s[slot] = each machine's A_i^T u_i at its shared columns.
      if (whole) s.fill(0);
      else for (let k = 0; k < columns.length; k++) s.fill(0, slotPtr[columns[k]], slotPtr[columns[k] + 1]);
      accumulateSlots(coupling, u, s);
      // ex stays 0 at an unshared column's slot (never written), which A's own rows then meet.
      excludeOwnSlots(slotPtr, columns, s, ex);
      rowsTimesSlots(coupling, ex, t);
      pass(false, t, u);
      for (let r = 0; r < n; r++) out[r] = v[r] + u[r];
    },
  };
}

/** S^{-1} = A^{-1} Gb A^{-T} (module comment) over the columns, through the sparse LU of A (its solves: the TypeScript ones unless given). */
export function inverseSOperator(
  slots: MachineColumnSlots,
  lu: SparseLuFactorization,
  solves: LuSolves = typescriptLuSolves(lu),
): SymmetricOperator {
  const n = slots.a.rows;
  if (lu.n !== n) throw new DimensionMismatchError(`The LU factorization is of order ${lu.n}, the matrix has ${n} rows.`);
  const entries = allEntries(slots);
  const s = new Float64Array(slots.slotMachine.length);
  const t = new Float64Array(n);
  const g = new Float64Array(n);
  return {
    size: n,
    apply(v, out) {
      solves.solveTransposed(v, t);
      s.fill(0);
      accumulateSlots(entries, t, s);
      rowsTimesSlots(entries, s, g);
      solves.solve(g, out);
    },
  };
}

/** lambda_max(S) by Lanczos on S' (scaledGramOperator: the factor solves on this thread, or by the pass given). */
export function* lambdaMaxSWork(
  slots: MachineColumnSlots,
  solves: GramFactorSolves | MachineSolvesPass,
  options: LargestEigenvalueOptions = {},
  workspace?: KrylovWorkspace,
): Work<SpectralEstimate> {
  if (slots.blockDiagonal) return IDENTITY_ESTIMATE;
  return spectralEstimateOf(yield* largestEigenvalueWork(scaledGramOperator(slots, solves), options, workspace));
}

export function* lambdaMinSWork(
  slots: MachineColumnSlots,
  lu: SparseLuFactorization,
  options: LargestEigenvalueOptions = {},
  workspace?: KrylovWorkspace,
  luSolves?: LuSolves,
): Work<SpectralEstimate> {
  if (slots.blockDiagonal) return IDENTITY_ESTIMATE;
  return spectralEstimateOf(yield* smallestEigenvalueByInverseWork(inverseSOperator(slots, lu, luSolves), options, workspace));
}
