/**
 * What moving one row to another machine does to S's extreme eigenvalues, to first order, for the
 * partition refinement (../partitioning/refinement.ts). Guidance only: the kappa(S) a partition is
 * judged by is the analysis' (./analyze.ts partitionKappaSWork), not the estimates here.
 *
 * Moving row a_k from machine j to machine h changes S by a rank-2 term: P_j loses w w^T, w the unit
 * vector of R(A_j) orthogonal to j's other rows (column k of A_j^+ = Q_j R_j^{-T}, normalized), and P_h
 * gains z z^T, z = (I - P_h) a_k / |(I - P_h) a_k|. First-order perturbation of a simple eigenvalue with
 * unit eigenvector x: delta lambda = (x . z)^2 - (x . w)^2, with
 *   x . w = (R_j^{-1} Q_j^T x)_k / |row k of R_j^{-1}|,   x . z = (x . a_k - (Q_h^T x) . (Q_h^T a_k)) / |(I - P_h) a_k|,
 * for x = u (lambda_max(S)) and x = v (lambda_min(S)). Both are optimistic (v^T S' v >= lambda_min(S'),
 * u^T S' u <= lambda_max(S')) and miss the case where w or z itself becomes the extreme direction; the
 * short list is therefore re-ranked by Rayleigh-Ritz on span{u, v, w, z} (`rayleighRitz`), which sees it.
 *
 * Built from A's rows and an assignment alone, the same way on dense and CSR storage: each machine's
 * rows on the columns they touch, A_i^T = Q_i R_i by Householder QR (../linalg/householderQr.ts), u by
 * Lanczos on x -> sum_i Q_i (Q_i^T x), v by Lanczos on S^{-1} = (M^T M)^{-1}, M = Q^T, through a dense
 * LU of M (as ./conditioning.ts computes lambda_min(S)) or, given a factorization of a dense A by
 * another partition, through it (./kappaS.ts inverseSThroughFactoredOperator). Dense n x n memory and
 * O(n^3) work: for small systems only (the refinement's size limit).
 *
 * The route from R alone (a square dense A, given the machines' R, the rows' Gram matrix and a factorization of A):
 * Q_i = A_i^T R_i^{-1} is never formed. u by Lanczos on S x = A^T P (A x) (./kappaS.ts factorsSOperator), every row's
 * coordinates from the Gram matrix, and Q_i^T x = R_i^{-T} (A_i x) from one product of A with x, so a proposal's
 * machines need the Cholesky factors of their blocks of A A^T (p^3 / 3) where a QR and Q cost ~4 p^2 n.
 */
import type { Work } from '../cooperative.js';
import { eigensolverOptionsOf, largestEigenvalueWork, type SymmetricOperator } from '../eigen/lanczos.js';
import { householderQrWork } from '../linalg/householderQr.js';
import type { Kernels } from '../linalg/kernels.js';
import { luWork } from '../linalg/lu.js';
import { columnSupport, csrToDense, restrictColumns, selectRows } from '../sparse/csr.js';
import { copyRowsOnColumns, denseColumnSupport, dot, type CsrMatrix, type DenseMatrix } from '../matrix.js';
import { symmetricEigen } from '../eigen/symmetricEigen.js';
import { inverseNormalOperatorOf, type FactoredMatrix } from './conditioning.js';
import type { DenseMachineFactor } from '../machines/machineData.js';
import {
  basesSBlockProduct,
  basesSOperator,
  basisCoordinates,
  factorsSOperator,
  inverseSThroughFactoredOperator,
  triangularConditionEstimate,
  type SEnds,
  type SEndVectors,
} from './kappaS.js';
import { offsetsOf, type RowGram } from './gramBlocks.js';

/** One machine's A_i^T = Q_i R_i: row t of q (p x cols.length) is the t-th basis vector of R(A_i) on `cols`. */
export interface MachineBasis {
  rows: Int32Array;
  cols: Int32Array;
  /** null on the route from R alone (RowMoveEffectsOptions.factors): Q_i = A_i^T R_i^{-1} is never formed. */
  q: Float64Array | null;
  r: Float64Array;
}

export interface RowMoveEffects {
  /** Ritz estimates of lambda_max(S), lambda_min(S) for the current assignment. */
  lambdaMax: number;
  lambdaMin: number;
  /** Their Ritz vectors (unit norm). */
  u: Float64Array;
  v: Float64Array;
  /** [k * m + h]: first-order change of lambda_max(S) when row k moves to machine h (NaN for its own machine or a move that makes h rank-deficient). */
  deltaMax: Float64Array;
  /** The same for lambda_min(S). */
  deltaMin: Float64Array;
  /**
   * For each move (row k to machine h), lambda_max(S) and lambda_min(S) after it by Rayleigh-Ritz on S' = S - w w^T +
   * z z^T over span{u, v, w, z} (module comment): the first order misses a new extreme direction along w or z itself
   * (w poorly covered by the other machines, z already well covered). null for a move without a w or z. On a dense A
   * whose machines' R are well-conditioned, from every row's coordinates in every basis (rayleighRitzFromCoordinates);
   * otherwise the moves' w and z are formed and their products with S taken together, one matrix product per machine.
   */
  rayleighRitz(moves: readonly { row: number; to: number }[]): ({ lambdaMax: number; lambdaMin: number } | null)[];
}

/** Ritz vectors to this relative residual: enough to rank moves, far cheaper than the analysis' 1e-10. */
const GUIDANCE_TOLERANCE = 1e-6;
const GUIDANCE_MAX_ITERATIONS = 1000;
/** A row whose residual against machine h's row space is below this fraction of its norm would make h numerically rank-deficient. */
const DEPENDENT_ROW = 1e-6;

/** Row k of A as (columns, values). */
export function rowEntries(a: DenseMatrix | CsrMatrix, k: number): { cols: ArrayLike<number>; values: ArrayLike<number> } {
  if ('rowPtr' in a) {
    const begin = a.rowPtr[k];
    const end = a.rowPtr[k + 1];
    return { cols: a.colIdx.subarray(begin, end), values: a.values.subarray(begin, end) };
  }
  const n = a.cols;
  const cols: number[] = [];
  const values: number[] = [];
  for (let j = 0; j < n; j++) {
    const x = a.data[k * n + j];
    if (x !== 0) {
      cols.push(j);
      values.push(x);
    }
  }
  return { cols, values };
}

function* machineBasisWork(kernels: Kernels, a: DenseMatrix | CsrMatrix, rows: Int32Array): Work<MachineBasis | null> {
  const cols = 'rowPtr' in a ? columnSupport(a, rows) : denseColumnSupport(a, rows);
  const c = cols.length;
  const p = rows.length;
  if (p > c) return null;
  // The machine's rows on their columns (rows ascending: an assignment's machine).
  const rowsOfA =
    'rowPtr' in a ? csrToDense(restrictColumns(selectRows(a, rows), cols)).data : copyRowsOnColumns(a, rows, cols, new Float64Array(p * c));
  const { q, r } = yield* householderQrWork(kernels, rowsOfA, p, c);
  return { rows, cols, q, r };
}

/**
 * A Q_i^T (n x p, row-major) for a dense A: every row's coordinates in machine i's basis, by the kernels' product
 * (on A's own rows when the machine touches every column, else on A's columns it touches), in slices of rows between
 * yields. The loop it replaced read Q_i by columns for each row: ~220 s of the TypeScript advice at n = 2000, m = 10.
 * Given the rows' Gram matrix (the caller's for a well-conditioned machine), from it instead (basisCoordinatesFromRowGramWork).
 */
function* basisCoordinatesOfRowsWork(kernels: Kernels, a: DenseMatrix, basis: MachineBasis, rowGram?: RowGram): Work<BasisCoordinates> {
  const n = a.rows;
  const { cols } = basis;
  const c = cols.length;
  const p = basis.rows.length;
  if (rowGram !== undefined && c === a.cols && rowGram.rows === n) return yield* basisCoordinatesFromRowGramWork(kernels, basis, rowGram);
  const q = basis.q!;
  const x =
    c === a.cols
      ? a.data
      : copyRowsOnColumns(
          a,
          Int32Array.from({ length: n }, (_, k) => k),
          cols,
          new Float64Array(n * c),
        );
  const out = new Float64Array(n * p);
  const slice = kernels.dense.productRows(c * p);
  for (let k0 = 0; k0 < n; k0 += slice) {
    kernels.dense.multiplyByTransposeRows(x, q, c, k0, Math.min(n, k0 + slice), p, out, p);
    yield undefined;
  }
  return withSquaredNorms(out, n, p);
}

/**
 * Largest bound on the relative error of |P_h a_k|^2 under which the coordinates come from the rows' Gram matrix, and
 * the Rayleigh-Ritz values from the coordinates (rayleighRitzFromCoordinates): they guide the refinement's proposals
 * (each judged by its exact kappa(S)), and the rows' residuals |(I - P_h) a_k|^2 they are subtracted from are cut at
 * DEPENDENT_ROW^2 = 1e-12 of |a_k|^2.
 */
const WELL_CONDITIONED_MARGIN = 1e-6;

/**
 * Whether a machine's R is well-conditioned enough for its coordinates to come from the rows' Gram matrix and for
 * triangular solves with R^T to map coordinates between bases: the products' rounding, n p eps |A_h| |a_k|, through
 * R_h^{-T} is at most n p eps kappa(R_h)^2 of |a_k|^2 in |P_h a_k|^2, kappa estimated from below within ~2x
 * (../analysis/kappaS.ts triangularConditionEstimate; a factor 16 over it, as ./principalAngles.ts thetaHFromRowGramWork).
 */
function wellConditioned(kernels: Kernels, basis: MachineBasis, n: number): boolean {
  const p = basis.rows.length;
  const kappa = triangularConditionEstimate(kernels, basis.r, p);
  return 16 * n * p * Number.EPSILON * kappa * kappa <= WELL_CONDITIONED_MARGIN;
}

/** Columns of the rows' Gram matrix solved between yields. */
const ROW_GRAM_SLICE = 256;

/**
 * A Q_h^T from the rows' Gram matrix (the advisor's, ./gramBlocks.ts RowGram): A_h = R_h^T Q_h^T, so Q_h^T a_k =
 * R_h^{-T} (A_h a_k), one triangular solve on the p x n block of A A^T of h's rows, p^2 n / 2 multiply-adds where the
 * product with Q_h costs p n^2 (dense n = 2000, m = 10: 20x fewer). A square dense A's machine with an invertible R_h.
 */
function* basisCoordinatesFromRowGramWork(kernels: Kernels, basis: MachineBasis, gram: RowGram): Work<BasisCoordinates> {
  const { rows: n, normalized, rowNorms } = gram;
  const { rows, r } = basis;
  const p = rows.length;
  const out = new Float64Array(n * p);
  const block = new Float64Array(p * Math.min(n, ROW_GRAM_SLICE));
  for (let k0 = 0; k0 < n; k0 += ROW_GRAM_SLICE) {
    const w = Math.min(ROW_GRAM_SLICE, n - k0);
    // a_u . a_k for u in h's rows, k in [k0, k0 + w): p x w, row-major.
    for (let t = 0; t < p; t++) {
      const u = rows[t];
      const scale = rowNorms[u];
      const from = u * n + k0;
      for (let l = 0; l < w; l++) block[t * w + l] = scale * normalized[from + l] * rowNorms[k0 + l];
    }
    kernels.dense.solveRTransposedBlock(r, p, block, w);
    for (let t = 0; t < p; t++) for (let l = 0; l < w; l++) out[(k0 + l) * p + t] = block[t * w + l];
    yield undefined;
  }
  return withSquaredNorms(out, n, p);
}

/** The coordinates (n x p, row-major) with each row's squared norm. */
function withSquaredNorms(values: Float64Array, n: number, p: number): BasisCoordinates {
  const norm2 = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let s = 0;
    for (let t = k * p; t < (k + 1) * p; t++) s += values[t] * values[t];
    norm2[k] = s;
  }
  return { values, norm2 };
}

/**
 * S's ends to the guidance's tolerance with their Ritz vectors: u by Lanczos on S, v by Lanczos on S^{-1} through
 * `factored`, else through the LU of M = Q^T (rows = basis vectors; S = M^T M). null: M is exactly singular.
 */
function* sEndsWork(
  kernels: Kernels,
  a: DenseMatrix | CsrMatrix,
  bases: readonly MachineBasis[],
  sOperator: SymmetricOperator,
  factored?: FactoredMatrix,
  startVectors?: SEndVectors,
): Work<SEnds | null> {
  const n = a.cols;
  const u = new Float64Array(n);
  const v = new Float64Array(n);
  const lanczosOptions = { tolerance: GUIDANCE_TOLERANCE, maxIterations: GUIDANCE_MAX_ITERATIONS, ...eigensolverOptionsOf(kernels) };
  const top = yield* largestEigenvalueWork(sOperator, { ...lanczosOptions, ritzVector: u, startVector: startVectors?.u });
  let inverse: SymmetricOperator;
  if (factored !== undefined && 'data' in a) {
    inverse = inverseSThroughFactoredOperator(
      kernels,
      factored,
      bases.map(({ rows, r }) => ({ p: rows.length, r, rows })),
    );
  } else {
    const basisRows = new Float64Array(n * n);
    let row = 0;
    for (const { rows, cols, q } of bases) {
      const c = cols.length;
      for (let t = 0; t < rows.length; t++, row++) for (let s = 0; s < c; s++) basisRows[row * n + cols[s]] = q![t * c + s];
    }
    const f = yield* luWork(kernels, { rows: n, cols: n, data: basisRows }, { inPlace: true });
    if (f.zeroPivotColumn >= 0) return null;
    inverse = inverseNormalOperatorOf(f);
  }
  const inverseTop = yield* largestEigenvalueWork(inverse, { ...lanczosOptions, ritzVector: v, startVector: startVectors?.v });
  return { u, v, lambdaMax: top.value, lambdaMin: 1 / inverseTop.value };
}

/**
 * Q_i^T x of each machine from x's products with A's rows (products[2 k + offset] = a_k . x): R_i^{-T} (A_i x), since
 * A_i = R_i^T Q_i^T. A machine on every column (the route from R alone).
 */
function coordinatesThroughR(kernels: Kernels, bases: readonly MachineBasis[], products: Float64Array, offset: number): Float64Array[] {
  return bases.map(({ rows, r }) => {
    const p = rows.length;
    const out = new Float64Array(p);
    for (let t = 0; t < p; t++) out[t] = products[2 * rows[t] + offset];
    kernels.dense.solveRTransposedBlock(r, p, out, 1);
    return out;
  });
}

/**
 * The machines of RowMoveEffectsOptions.factors as bases without Q, when the route from R alone stands for them: a square
 * dense A, the rows' Gram matrix (every row's coordinates from it) and a factorization of A (v through it) given, and
 * every machine on every column, holding the assignment's rows, its R invertible and well-conditioned (the
 * coordinates' and the Rayleigh-Ritz values' bound, wellConditioned). null: the bases with Q.
 */
function factorRoute(
  a: DenseMatrix,
  rowsOf: readonly number[][],
  options: RowMoveEffectsOptions,
  isConditioned: (basis: MachineBasis) => boolean,
): { machines: readonly DenseMachineFactor[]; bases: MachineBasis[] } | null {
  const { factors, rowGram, factored } = options;
  const n = a.cols;
  if (factors === undefined || factored === undefined || a.rows !== n || rowGram?.rows !== n || factors.length !== rowsOf.length)
    return null;
  const everyColumn = Int32Array.from({ length: n }, (_, s) => s);
  const bases: MachineBasis[] = [];
  for (const [i, { rows, r, c }] of factors.entries()) {
    const p = rows.length;
    if (c !== n || p !== rowsOf[i].length || rows.some((k, t) => k !== rowsOf[i][t])) return null;
    for (let t = 0; t < p; t++) if (r[t * p + t] === 0) return null;
    const basis = { rows, cols: everyColumn, q: null, r };
    if (!isConditioned(basis)) return null;
    bases.push(basis);
  }
  return { machines: factors, bases };
}

/** R^{-1} (p x p, upper triangular, row-major) by back substitution, column by column. */
function upperInverse(r: Float64Array, p: number): Float64Array {
  const inv = new Float64Array(p * p);
  for (let col = 0; col < p; col++) {
    for (let i = col; i >= 0; i--) {
      let s = i === col ? 1 : 0;
      for (let t = i + 1; t <= col; t++) s -= r[i * p + t] * inv[t * p + col];
      inv[i * p + col] = s / r[i * p + i];
    }
  }
  return inv;
}

export interface RowMoveEffectsOptions {
  /** A dense square A factored by some partition of it (./conditioning.ts FactoredMatrix): v through it, no LU of this Q^T. */
  factored?: FactoredMatrix;
  /** What earlier calls on the same dense A computed of each basis (A Q_h^T, R_h^{-1}): a machine whose basis is one of theirs is not multiplied again. */
  cache?: MoveEffectsCache;
  /**
   * Where u's and v's Lanczos runs start (else at random): a nearby partition's u and v, as the effects before the
   * refinement's last accepted proposal found them (a few rows moved), which they converge from in fewer steps.
   */
  startVectors?: SEndVectors;
  /**
   * A dense square A's rows' Gram matrix (the advisor's row graph's, ./gramBlocks.ts RowGram): every row's coordinates in
   * a well-conditioned machine's basis from it (basisCoordinatesFromRowGramWork) instead of the product A Q_h^T.
   */
  rowGram?: RowGram;
  /**
   * The machines of this assignment with R alone (../machines/machineData.ts DenseMachineFactor, each on every column,
   * e.g. from the rows' Gram matrix): with `rowGram` and `factored`, on a square dense A whose machines' R are all
   * well-conditioned, the effects read R alone (module comment: the route from R); otherwise they are not read.
   */
  factors?: readonly DenseMachineFactor[];
  /**
   * The machines' QR as a distributed system of this assignment holds it (machine i's rows ascending on the columns they
   * touch, as built here), asked for when the route from R alone does not stand (called then only): the caller's system
   * of this assignment, held or built reusing the machines of others it holds. Undefined (or returning undefined): each
   * machine's QR here.
   */
  basesWork?: () => Work<readonly MachineBasis[] | undefined>;
  /**
   * S's ends of this assignment with their Ritz vectors, when the caller has them to at least the guidance's accuracy
   * (the refinement's accepted proposal, from its evaluation: ./kappaS.ts sEndsOfFactorsWork): not computed again.
   */
  ends?: SEnds;
}

/**
 * What the move effects compute from one machine's basis alone, kept by the basis' R (which a distributed system or a
 * machine's factor never changes), for one dense A: every row's coordinates in the basis, A Q_h^T (n x p), and R_h^{-1}.
 * The refinement's proposals move rows between a few machines, and the move effects that follow an accepted one read
 * the other machines' bases as they were (dense n = 2000, m = 10: 2 to 4 machines of the 10 changed by each of the 8
 * proposals).
 */
export class MoveEffectsCache {
  /** A Q_h^T by R_h's r, with the squared norm of each of its rows (|P_h a_k|^2). */
  readonly coordinates = new WeakMap<Float64Array, BasisCoordinates>();
  /** R_h^{-1} by R_h's r. */
  readonly inverses = new WeakMap<Float64Array, Float64Array>();
  /** Whether R_h is well-conditioned (wellConditioned), by R_h's r. */
  readonly conditioned = new WeakMap<Float64Array, boolean>();
  /** |a_k|^2 of every row of A. */
  rowNorm2: Float64Array | null = null;
  /**
   * The memory of G = Q^T Q (n x n) that rayleighRitzFromCoordinates makes each round, and the round whose G it holds:
   * each round's G overwrites the last's in pages already touched (a fresh 32 MB array cost ~100 ms of page faults at
   * n = 2000 on a 2-core EPYC VM, 10x the writes themselves).
   */
  gram: { data: Float64Array; holder: object } | null = null;
  constructor(readonly a: DenseMatrix) {}
}

/** Every row's coordinates in one machine's basis, A Q_h^T (n x p, row-major), and their squared norms (n). */
export interface BasisCoordinates {
  readonly values: Float64Array;
  readonly norm2: Float64Array;
}

/**
 * lambda_max(S), lambda_min(S) of `assignment` (square A, m machines) and the first-order effect of
 * every single-row move on them (module comment); null when a machine has more rows than columns it
 * touches, or a block or Q^T is exactly singular (no guidance: the refinement stops).
 */
export function* rowMoveEffectsWork(
  kernels: Kernels,
  a: DenseMatrix | CsrMatrix,
  assignment: Int32Array,
  m: number,
  options: RowMoveEffectsOptions = {},
): Work<RowMoveEffects | null> {
  const { factored, startVectors, rowGram } = options;
  const cache = options.cache?.a === a ? options.cache : undefined;
  const n = a.cols;
  const rowsOf: number[][] = Array.from({ length: m }, () => []);
  assignment.forEach((machine, k) => rowsOf[machine].push(k));
  // Each R's estimate once (the route's test, then the coordinates'), kept across calls by the cache.
  const conditionedBy = cache?.conditioned ?? new WeakMap<Float64Array, boolean>();
  const isConditioned = (basis: MachineBasis): boolean => {
    const known = conditionedBy.get(basis.r) ?? wellConditioned(kernels, basis, n);
    conditionedBy.set(basis.r, known);
    return known;
  };
  // The route from R alone (module comment) when every machine's factor qualifies, else the bases with Q.
  const factors = 'data' in a ? factorRoute(a, rowsOf, options, isConditioned) : null;
  const bases: MachineBasis[] = [];
  if (factors !== null) bases.push(...factors.bases);
  else {
    const known = options.basesWork === undefined ? undefined : yield* options.basesWork();
    for (const [i, rows] of rowsOf.entries()) {
      const basis = known?.[i] ?? (yield* machineBasisWork(kernels, a, Int32Array.from(rows)));
      if (basis === null) return null;
      const p = basis.rows.length;
      for (let t = 0; t < p; t++) if (basis.r[t * p + t] === 0) return null;
      bases.push(basis);
    }
  }
  const pMax = Math.max(...bases.map((b) => b.rows.length));
  // The bases as S's products read them (./kappaS.ts), for every product with S below (Q's route only).
  const sBases = factors === null ? bases.map(({ rows, cols, q }) => ({ p: rows.length, cols, q: q! })) : null;
  const sOperator =
    factors === null ? basesSOperator(kernels, sBases!, n) : factorsSOperator(kernels, factors.machines, n, a as DenseMatrix);
  // S's ends and their vectors: the caller's when it has them (the refinement's accepted proposal, from its evaluation).
  const sEnds = options.ends ?? (yield* sEndsWork(kernels, a, bases, sOperator, factored, startVectors));
  if (sEnds === null) return null;
  const { u, v, lambdaMax, lambdaMin } = sEnds;

  // For the addition below, (x . z)^2 for every row k and every other machine h: |a_k|^2, a_k . u, a_k . v (once) and
  // the coordinates Q_h a_k of every row in h's basis (one product A Q_h^T per machine on dense A).
  let rowNorm2 = cache?.rowNorm2 ?? null;
  const rowDots = new Float64Array(2 * n);
  if ('data' in a) {
    // a_k . u and a_k . v of every row by the kernels' product of A with [u; v]; |a_k|^2 once per A.
    const uv = new Float64Array(2 * n);
    uv.set(u);
    uv.set(v, n);
    kernels.dense.multiplyByTransposeRows(a.data, uv, n, 0, n, 2, rowDots, 2);
    if (rowNorm2 === null) {
      rowNorm2 = new Float64Array(n);
      for (let k = 0; k < n; k++) {
        let s = 0;
        for (let e = k * n; e < (k + 1) * n; e++) s += a.data[e] * a.data[e];
        rowNorm2[k] = s;
      }
      if (cache !== undefined) cache.rowNorm2 = rowNorm2;
    }
  } else {
    rowNorm2 = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      const { cols: rc, values } = rowEntries(a, k);
      for (let e = 0; e < rc.length; e++) {
        rowNorm2[k] += values[e] * values[e];
        rowDots[2 * k] += values[e] * u[rc[e]];
        rowDots[2 * k + 1] += values[e] * v[rc[e]];
      }
    }
  }
  yield undefined;
  const deltaMax = new Float64Array(n * m).fill(NaN);
  const deltaMin = new Float64Array(n * m).fill(NaN);
  // Removal: (x . w_k)^2 for every row k on its own machine.
  const removedU = new Float64Array(n);
  const removedV = new Float64Array(n);
  const coordsU = sBases?.map((b) => basisCoordinates(b, u, new Float64Array(b.p))) ?? coordinatesThroughR(kernels, bases, rowDots, 0);
  const coordsV = sBases?.map((b) => basisCoordinates(b, v, new Float64Array(b.p))) ?? coordinatesThroughR(kernels, bases, rowDots, 1);
  const inverses: Float64Array[] = [];
  for (const [j, basis] of bases.entries()) {
    const p = basis.rows.length;
    const inv = cache?.inverses.get(basis.r) ?? upperInverse(basis.r, p);
    cache?.inverses.set(basis.r, inv);
    inverses.push(inv);
    for (let t = 0; t < p; t++) {
      let xu = 0;
      let xv = 0;
      let norm = 0;
      for (let s = t; s < p; s++) {
        const e = inv[t * p + s];
        xu += e * coordsU[j][s];
        xv += e * coordsV[j][s];
        norm += e * e;
      }
      removedU[basis.rows[t]] = (xu * xu) / norm;
      removedV[basis.rows[t]] = (xv * xv) / norm;
    }
    yield undefined;
  }
  const slotOf = new Int32Array(n);
  const projected = new Float64Array(pMax);
  // (Q_h a_k) . (Q_h u) and (Q_h a_k) . (Q_h v) of every row k: a dense A's by the kernels' product of A Q_h^T with them.
  const insideDots = new Float64Array(2 * n);
  const coordsUV = new Float64Array(2 * pMax);
  // Each machine's R well-conditioned (a dense A only): its coordinates from the rows' Gram matrix when given, and the
  // Rayleigh-Ritz values below from the coordinates.
  const conditioned = 'data' in a ? bases.map(isConditioned) : [];
  const coordinatesOf: BasisCoordinates[] = [];
  for (const [h, basis] of bases.entries()) {
    const { cols } = basis;
    const c = cols.length;
    const p = basis.rows.length;
    // Row k of A Q_h^T at coordinates.values[k * p]: a_k's coordinates in h's basis.
    let coordinates: BasisCoordinates | null = null;
    let q: Float64Array | null = null;
    if (!('rowPtr' in a)) {
      coordinates =
        cache?.coordinates.get(basis.r) ?? (yield* basisCoordinatesOfRowsWork(kernels, a, basis, conditioned[h] ? rowGram : undefined));
      cache?.coordinates.set(basis.r, coordinates);
      coordinatesOf.push(coordinates);
      coordsUV.set(coordsU[h]);
      coordsUV.set(coordsV[h], p);
      kernels.dense.multiplyByTransposeRows(coordinates.values, coordsUV, p, 0, n, 2, insideDots, 2);
    } else {
      slotOf.fill(-1);
      cols.forEach((col, s) => (slotOf[col] = s));
      q = basis.q!;
    }
    for (let k = 0; k < n; k++) {
      if (assignment[k] === h) continue;
      let dotU = rowDots[2 * k];
      let dotV = rowDots[2 * k + 1];
      let inside = 0;
      if (coordinates !== null) {
        inside = coordinates.norm2[k];
        dotU -= insideDots[2 * k];
        dotV -= insideDots[2 * k + 1];
      } else {
        const { cols: rc, values } = rowEntries(a, k);
        projected.fill(0, 0, p);
        for (let e = 0; e < rc.length; e++) {
          const s = slotOf[rc[e]];
          if (s < 0) continue;
          for (let t = 0; t < p; t++) projected[t] += q![t * c + s] * values[e];
        }
        for (let t = 0; t < p; t++) {
          inside += projected[t] * projected[t];
          dotU -= coordsU[h][t] * projected[t];
          dotV -= coordsV[h][t] * projected[t];
        }
      }
      const norm2 = rowNorm2[k];
      const residual2 = norm2 - inside;
      if (!(residual2 > DEPENDENT_ROW * DEPENDENT_ROW * norm2)) continue;
      deltaMax[k * m + h] = (dotU * dotU) / residual2 - removedU[k];
      deltaMin[k * m + h] = (dotV * dotV) / residual2 - removedV[k];
    }
    yield undefined;
  }
  const su = new Float64Array(n);
  const sv = new Float64Array(n);
  sOperator.apply(u, su);
  sOperator.apply(v, sv);
  const localOf = new Int32Array(n);
  for (const basis of bases) basis.rows.forEach((k, t) => (localOf[k] = t));
  // w and z of a move (module comment), normalized; null when either vanishes. Both by the kernels' products on the
  // machines' columns (a loop over each entry through the column slots took ~4 ms a move at n = 2000, m = 10).
  const onCols = new Float64Array(n);
  const coordinates = new Float64Array(pMax);
  const moveVectors = (k: number, h: number): { w: Float64Array; z: Float64Array } | null => {
    const w = new Float64Array(n);
    {
      // w = Q_j R_j^{-T} e_t: row t of R_j^{-1} (upper triangular, from column t) times Q_j's rows t..p-1.
      const j = assignment[k];
      const { cols } = bases[j];
      const q = bases[j].q!;
      const c = cols.length;
      const p = bases[j].rows.length;
      const t = localOf[k];
      kernels.dense.gemm(true, c, 1, p - t, 1, q.subarray(t * c), c, inverses[j].subarray(t * p + t), 1, 0, onCols, 1);
      for (let col = 0; col < c; col++) w[cols[col]] = onCols[col];
    }
    const z = new Float64Array(n);
    {
      // z = (I - Q_h Q_h^T) a_k: a_k, less its projection on h's columns.
      if ('data' in a) z.set(a.data.subarray(k * n, (k + 1) * n));
      else {
        const { cols: rc, values } = rowEntries(a, k);
        for (let e = 0; e < rc.length; e++) z[rc[e]] = values[e];
      }
      const { cols } = bases[h];
      const q = bases[h].q!;
      const c = cols.length;
      const p = bases[h].rows.length;
      for (let col = 0; col < c; col++) onCols[col] = z[cols[col]];
      kernels.dense.gemm(false, p, 1, c, 1, q, c, onCols, 1, 0, coordinates, 1);
      kernels.dense.gemm(true, c, 1, p, -1, q, c, coordinates, 1, 1, onCols, 1);
      for (let col = 0; col < c; col++) z[cols[col]] = onCols[col];
    }
    return normalize(w) && normalize(z) ? { w, z } : null;
  };
  // Q's route only (the route from R takes the Rayleigh-Ritz values from the coordinates).
  const sBlock = sBases === null ? null : basesSBlockProduct(kernels, sBases);
  const rayleighRitzOfVectors = (moves: readonly { row: number; to: number }[]): ({ lambdaMax: number; lambdaMin: number } | null)[] => {
    const pairs = moves.map(({ row, to }) => moveVectors(row, to));
    const kept = pairs.filter((pair) => pair !== null);
    // S w and S z of every move at once: rows 2 l and 2 l + 1 of the block are move l's w and z.
    const block = new Float64Array(2 * kept.length * n);
    kept.forEach(({ w, z }, l) => {
      block.set(w, 2 * l * n);
      block.set(z, (2 * l + 1) * n);
    });
    const products = sBlock!(block, 2 * kept.length, n);
    let l = 0;
    return pairs.map((pair) => {
      if (pair === null) return null;
      const { w, z } = pair;
      // S' x = S x - w (w . x) + z (z . x), with S u and S v computed once for every move.
      const images = [
        su.slice(),
        sv.slice(),
        products.subarray(2 * l * n, (2 * l + 1) * n),
        products.subarray((2 * l + 1) * n, (2 * l + 2) * n),
      ];
      l++;
      const vectors = [u, v, w, z];
      for (const [index, x] of vectors.entries()) {
        const y = images[index];
        const xw = dot(x, w);
        const xz = dot(x, z);
        for (let i = 0; i < n; i++) y[i] += z[i] * xz - w[i] * xw;
      }
      return ritzEnds(vectors, images);
    });
  };
  const ends: EndVectors = { u, v, su, sv, inU: coordsU, inV: coordsV, rowDots, rowNorm2 };
  const rayleighRitz =
    'data' in a && coordinatesOf.length === m && conditioned.every(Boolean)
      ? rayleighRitzFromCoordinates(kernels, a, assignment, bases, coordinatesOf, inverses, ends, cache)
      : rayleighRitzOfVectors;
  return { lambdaMax, lambdaMin, u, v, deltaMax, deltaMin, rayleighRitz };
}

/** S's extreme Ritz vectors, their images and their products with A's rows, as rayleighRitzFromCoordinates reads them. */
interface EndVectors {
  u: Float64Array;
  v: Float64Array;
  su: Float64Array;
  sv: Float64Array;
  /** Q_i^T u and Q_i^T v of each machine. */
  inU: readonly Float64Array[];
  inV: readonly Float64Array[];
  /** a_k . u and a_k . v at [2 k], [2 k + 1]. */
  rowDots: Float64Array;
  rowNorm2: Float64Array;
}

/**
 * RowMoveEffects.rayleighRitz from every row's coordinates in every machine's basis (C_i = A Q_i^T, kept from the move
 * effects) instead of the vectors w and z and their products with S (2 n^2 multiply-adds a move, for 64 moves a round
 * most of the refinement's ranking). The 4 x 4 projections of S' and of the identity on {u, v, w, z} need only each
 * vector's coordinates in each basis and its products with u, v, S u, S v:
 *   Q_i^T w = R_i^{-T} (C_j[rows of i] c),  c = R_j^{-T} e_t / |R_j^{-T} e_t| (w = Q_j c; Q_j^T w = c),
 *   Q_i^T z = (C_i[k] - R_i^{-T} (C_h[rows of i] C_h[k])) / |z~|,  |z~|^2 = |a_k|^2 - |C_h[k]|^2 (Q_h^T z = 0),
 * since C_j[rows of i] = A_i Q_j = R_i^T Q_i^T Q_j; then x^T S y = sum_i (Q_i^T x) . (Q_i^T y). The blocks
 * G_ij = Q_i^T Q_j are made once (n^2 numbers, ~n^3 / (2 m) multiply-adds), then 2 n p a move. For a dense A whose
 * machines' R are all well-conditioned (the solves with R_i^T).
 */
function rayleighRitzFromCoordinates(
  kernels: Kernels,
  a: DenseMatrix,
  assignment: Int32Array,
  bases: readonly MachineBasis[],
  coordinatesOf: readonly BasisCoordinates[],
  inverses: readonly Float64Array[],
  ends: EndVectors,
  cache?: MoveEffectsCache,
): RowMoveEffects['rayleighRitz'] {
  const n = a.rows;
  const m = bases.length;
  const { u, v, su, sv, inU, inV, rowDots, rowNorm2 } = ends;
  // a_k . S u and a_k . S v of every row; each basis' coordinates of u, v, S u, S v.
  const sDots = new Float64Array(2 * n);
  const suv = new Float64Array(2 * n);
  suv.set(su);
  suv.set(sv, n);
  kernels.dense.multiplyByTransposeRows(a.data, suv, n, 0, n, 2, sDots, 2);
  // Q_i^T S u and Q_i^T S v by one product a machine: rows 2 t and 2 t + 1 of Q_i [S u, S v] on i's columns; on the
  // route from R alone (no q), R_i^{-T} (A_i S u) from the products just made.
  const inSU: Float64Array[] = [];
  const inSV: Float64Array[] = [];
  if (bases.some(({ q }) => q === null)) {
    inSU.push(...coordinatesThroughR(kernels, bases, sDots, 0));
    inSV.push(...coordinatesThroughR(kernels, bases, sDots, 1));
  } else
    for (const { rows, cols, q } of bases) {
      const p = rows.length;
      const c = cols.length;
      let onCols = suv;
      if (c !== n) {
        onCols = new Float64Array(2 * c);
        for (let l = 0; l < c; l++) {
          onCols[l] = su[cols[l]];
          onCols[c + l] = sv[cols[l]];
        }
      }
      const both = new Float64Array(2 * p);
      kernels.dense.multiplyByTransposeRows(q!, onCols, c, 0, p, 2, both, 2);
      inSU.push(both.filter((_, e) => e % 2 === 0));
      inSV.push(both.filter((_, e) => e % 2 === 1));
    }
  const uSu = dot(u, su);
  const vSv = dot(v, sv);
  const uSv = 0.5 * (dot(u, sv) + dot(v, su));
  const uu = dot(u, u);
  const vv = dot(v, v);
  const uv = dot(u, v);
  const localOf = new Int32Array(n);
  for (const basis of bases) basis.rows.forEach((k, t) => (localOf[k] = t));
  // Q^T w and Q^T z of a move: machine i's coordinates at [offset_i, offset_i + p_i).
  const sizes = bases.map((basis) => basis.rows.length);
  const offsets = offsetsOf(sizes);
  const size = offsets[m - 1] + sizes[m - 1];
  // G = Q^T Q (size x size, G_ii = I), made at the first call: G_ij = R_i^{-T} C_j[rows of i], the lower blocks mirrored.
  // Every entry is written, so the memory of an earlier round's G (the cache's) serves; a round whose G was overwritten
  // by a later one's makes it again.
  let gram: Float64Array | null = null;
  const holder = {};
  const gramOfBases = (): Float64Array => {
    const held = cache?.gram?.data;
    const g = held !== undefined && held.length === size * size ? held : new Float64Array(size * size);
    if (cache !== undefined) cache.gram = { data: g, holder };
    // Machine i's row of blocks right of its diagonal, G_ij for every j > i, by one solve with R_i^T on their columns
    // (the later machines' columns of G are contiguous): 9 calls a round for m = 10, not 45 (at n = 1000 the small
    // solves' calls cost more than their work).
    const block = new Float64Array(size * Math.max(...bases.map((b) => b.rows.length)));
    for (let i = 0; i < m; i++) {
      const { rows, r } = bases[i];
      const pi = rows.length;
      for (let s = 0; s < pi; s++) {
        const row = (offsets[i] + s) * size + offsets[i];
        g.fill(0, row, row + pi);
        g[row + s] = 1;
      }
      const first = offsets[i] + pi;
      const width = size - first;
      if (width === 0) continue;
      for (let s = 0; s < pi; s++)
        for (let j = i + 1; j < m; j++) {
          const pj = bases[j].rows.length;
          const { values } = coordinatesOf[j];
          block.set(values.subarray(rows[s] * pj, (rows[s] + 1) * pj), s * width + offsets[j] - first);
        }
      kernels.dense.solveRTransposedBlock(r, pi, block, width);
      for (let s = 0; s < pi; s++) g.set(block.subarray(s * width, (s + 1) * width), (offsets[i] + s) * size + first);
      for (let l = 0; l < width; l++) {
        const row = (first + l) * size + offsets[i];
        for (let s = 0; s < pi; s++) g[row + s] = block[s * width + l];
      }
    }
    return g;
  };
  const dotAt = (x: Float64Array, y: Float64Array, yOffset: number, length: number): number => {
    let sum = 0;
    for (let l = 0; l < length; l++) sum += x[l] * y[yOffset + l];
    return sum;
  };
  /** Rows (size each) for the moves `group` (indices into moves) of op(G rows of machine i) times `columns` (one per move, p_i each), alpha, into `into`'s rows. */
  const groupProduct = (g: Float64Array, i: number, group: number[], columns: Float64Array[], alpha: number, into: Float64Array): void => {
    const p = bases[i].rows.length;
    const count = group.length;
    const left = new Float64Array(count * p);
    const out = new Float64Array(count * size);
    group.forEach((move, l) => {
      left.set(columns[move], l * p);
      out.set(into.subarray(move * size, (move + 1) * size), l * size);
    });
    // G is symmetric: (G[:, i's columns] x)^T = x^T G[i's rows, :].
    kernels.dense.gemm(false, count, size, p, alpha, left, p, g.subarray(offsets[i] * size), size, 1, out, size);
    group.forEach((move, l) => into.set(out.subarray(l * size, (l + 1) * size), move * size));
  };
  return (moves) => {
    if (gram === null || (cache !== undefined && cache.gram?.holder !== holder)) gram = gramOfBases();
    const g = gram;
    const count = moves.length;
    // Each move's w coordinates c in j's basis (normalized), a_k's in h's, |z~|; null when w or z vanishes.
    const cs: Float64Array[] = [];
    const aks: Float64Array[] = [];
    const zNorms = new Float64Array(count);
    const valid = new Uint8Array(count);
    const bySource: number[][] = Array.from({ length: m }, () => []);
    const byTarget: number[][] = Array.from({ length: m }, () => []);
    const inW = new Float64Array(count * size);
    const inZ = new Float64Array(count * size);
    moves.forEach(({ row: k, to: h }, move) => {
      const j = assignment[k];
      const t = localOf[k];
      const pj = bases[j].rows.length;
      const ph = bases[h].rows.length;
      // c = R_j^{-T} e_t (row t of R_j^{-1}, from column t), normalized: w's coordinates in j's basis.
      const c = new Float64Array(pj);
      let wNorm2 = 0;
      for (let l = t; l < pj; l++) {
        c[l] = inverses[j][t * pj + l];
        wNorm2 += c[l] * c[l];
      }
      const wNorm = Math.sqrt(wNorm2);
      for (let l = t; l < pj; l++) c[l] /= wNorm;
      cs.push(c);
      aks.push(coordinatesOf[h].values.subarray(k * ph, (k + 1) * ph));
      const residual2 = rowNorm2[k] - coordinatesOf[h].norm2[k];
      if (!(wNorm2 > 0) || !(residual2 > DEPENDENT_ROW * DEPENDENT_ROW * rowNorm2[k])) return;
      valid[move] = 1;
      zNorms[move] = Math.sqrt(residual2);
      bySource[j].push(move);
      byTarget[h].push(move);
      // Q^T a_k, for Q^T z~ = Q^T a_k - G[:, h's columns] C_h[k].
      for (let i = 0; i < m; i++) {
        const p = bases[i].rows.length;
        inZ.set(coordinatesOf[i].values.subarray(k * p, (k + 1) * p), move * size + offsets[i]);
      }
    });
    // Q^T w = G[:, j's columns] c and Q^T z~, the moves of one machine together (one product each).
    for (let i = 0; i < m; i++) {
      if (bySource[i].length > 0) groupProduct(g, i, bySource[i], cs, 1, inW);
      if (byTarget[i].length > 0) groupProduct(g, i, byTarget[i], aks, -1, inZ);
    }
    return moves.map(({ row: k, to: h }, move) => {
      if (!valid[move]) return null;
      const j = assignment[k];
      const pj = bases[j].rows.length;
      const ph = bases[h].rows.length;
      const c = cs[move];
      const ak = aks[move];
      const zNorm = zNorms[move];
      const w = inW.subarray(move * size, (move + 1) * size);
      const z = inZ.subarray(move * size, (move + 1) * size);
      // Exactly 0 on h's basis (G_hh = I).
      z.fill(0, offsets[h], offsets[h] + ph);
      for (let s = 0; s < size; s++) z[s] /= zNorm;
      // Products with u, v, S u, S v (x . z~ = a_k . x - (Q_h^T x) . C_h[k]) and between w and z.
      const uw = dotAt(c, inU[j], 0, pj);
      const vw = dotAt(c, inV[j], 0, pj);
      const suw = dotAt(c, inSU[j], 0, pj);
      const svw = dotAt(c, inSV[j], 0, pj);
      const uz = (rowDots[2 * k] - dotAt(ak, inU[h], 0, ph)) / zNorm;
      const vz = (rowDots[2 * k + 1] - dotAt(ak, inV[h], 0, ph)) / zNorm;
      const suz = (sDots[2 * k] - dotAt(ak, inSU[h], 0, ph)) / zNorm;
      const svz = (sDots[2 * k + 1] - dotAt(ak, inSV[h], 0, ph)) / zNorm;
      const wz = (dotAt(c, coordinatesOf[j].values, k * pj, pj) - dotAt(ak, w, offsets[h], ph)) / zNorm;
      let wSw = 0;
      let zSz = 0;
      let wSz = 0;
      for (let s = 0; s < size; s++) {
        wSw += w[s] * w[s];
        zSz += z[s] * z[s];
        wSz += w[s] * z[s];
      }
      // Gram matrix of (u, v, w, z), and their S' = S - w w^T + z z^T products.
      const dotsW = [uw, vw, 1, wz];
      const dotsZ = [uz, vz, wz, 1];
      const gramOfVectors = [
        [uu, uv, uw, uz],
        [uv, vv, vw, vz],
        [uw, vw, 1, wz],
        [uz, vz, wz, 1],
      ];
      const sProducts = [
        [uSu, uSv, suw, suz],
        [uSv, vSv, svw, svz],
        [suw, svw, wSw, wSz],
        [suz, svz, wSz, zSz],
      ];
      const projected = sProducts.map((line, x) => line.map((value, y) => value - dotsW[x] * dotsW[y] + dotsZ[x] * dotsZ[y]));
      return ritzEndsOfPencil(gramOfVectors, projected);
    });
  };
}

/**
 * The extreme Ritz values of a subspace given by the Gram matrix of its spanning vectors and the projection of the
 * operator on them (both symmetric): ritzEnds' Gram-Schmidt (twice) on the coefficients, in the Gram matrix's inner
 * product. A vector whose residual's norm is at most 1e-6 is dropped: that norm comes from the Gram matrix's entries,
 * whose rounding (a few eps) leaves a norm below ~1e-8 noise.
 */
function ritzEndsOfPencil(gram: number[][], projected: number[][]): { lambdaMax: number; lambdaMin: number } {
  const count = gram.length;
  const inner = (x: Float64Array, matrix: number[][], y: Float64Array): number => {
    let sum = 0;
    for (let i = 0; i < count; i++) for (let l = 0; l < count; l++) sum += x[i] * matrix[i][l] * y[l];
    return sum;
  };
  const basis: Float64Array[] = [];
  for (let index = 0; index < count; index++) {
    const x = new Float64Array(count);
    x[index] = 1;
    for (let pass = 0; pass < 2; pass++)
      for (const b of basis) {
        const c = inner(b, gram, x);
        for (let l = 0; l < count; l++) x[l] -= c * b[l];
      }
    const norm = Math.sqrt(Math.max(0, inner(x, gram, x)));
    if (!(norm > 1e-6)) continue;
    for (let l = 0; l < count; l++) x[l] /= norm;
    basis.push(x);
  }
  const size = basis.length;
  const matrix = new Float64Array(size * size);
  for (let i = 0; i < size; i++) for (let l = 0; l < size; l++) matrix[i * size + l] = inner(basis[i], projected, basis[l]);
  const values = new Float64Array(size);
  symmetricEigen(matrix, size, values, new Float64Array(size));
  return { lambdaMax: Math.max(...values), lambdaMin: Math.min(...values) };
}

function normalize(x: Float64Array): boolean {
  const norm = Math.sqrt(dot(x, x));
  if (!(norm > 0)) return false;
  for (let i = 0; i < x.length; i++) x[i] /= norm;
  return true;
}

/** The extreme Ritz values on span(vectors) of the operator that maps them to `images` (orthonormalized by Gram-Schmidt; near-dependent ones dropped). */
function ritzEnds(vectors: Float64Array[], images: Float64Array[]): { lambdaMax: number; lambdaMin: number } {
  // Gram-Schmidt (twice) on the vectors, carrying each basis vector's coefficients so that its image is the same
  // combination of the vectors' images.
  const basis: { x: Float64Array; coefficients: Float64Array }[] = [];
  for (const [index, vector] of vectors.entries()) {
    const x = Float64Array.from(vector);
    const coefficients = new Float64Array(vectors.length);
    coefficients[index] = 1;
    for (let pass = 0; pass < 2; pass++) {
      for (const b of basis) {
        const c = dot(x, b.x);
        for (let i = 0; i < x.length; i++) x[i] -= c * b.x[i];
        for (let j = 0; j < coefficients.length; j++) coefficients[j] -= c * b.coefficients[j];
      }
    }
    const norm = Math.sqrt(dot(x, x));
    if (!(norm > 1e-8)) continue;
    for (let i = 0; i < x.length; i++) x[i] /= norm;
    for (let j = 0; j < coefficients.length; j++) coefficients[j] /= norm;
    basis.push({ x, coefficients });
  }
  const size = basis.length;
  const basisImages = basis.map(({ coefficients }) => {
    const y = new Float64Array(images[0].length);
    coefficients.forEach((c, j) => {
      if (c !== 0) for (let i = 0; i < y.length; i++) y[i] += c * images[j][i];
    });
    return y;
  });
  const projected = new Float64Array(size * size);
  for (let i = 0; i < size; i++)
    for (let l = 0; l < size; l++) projected[i * size + l] = 0.5 * (dot(basis[i].x, basisImages[l]) + dot(basis[l].x, basisImages[i]));
  const values = new Float64Array(size);
  symmetricEigen(projected, size, values, new Float64Array(size));
  return { lambdaMax: Math.max(...values), lambdaMin: Math.min(...values) };
}
