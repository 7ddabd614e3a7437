/**
 * The row space of a tall CSR machine (more rows p than support columns c) found from its columns, the usual machine of
 * a tall sparse regression: its rows are dependent by their number, and what its row space lacks, if anything, is a
 * few directions of its support: columns that depend on the others (a feature seen in one row only beside another,
 * duplicated features, a group of one-hot columns summing to another).
 *
 * A_i's columns are at most c and mostly independent, so a Cholesky factorization of N = A_i^T A_i (c x c) sees them as
 * a short, wide machine's Gram matrix sees its rows (../sparse/sparseCholesky.ts; CHOLMOD on the native backend):
 *  1. N is factored whole; where it is not positive definite, the pivot-dropping factorization of N names the columns F
 *     that lie within its rounding (~1e-7 rad) of the span of the others, K the kept ones (../machines/placement.ts
 *     keptGramFactor: on TypeScript one dropping factorization, which also gives N_K's factor);
 *  2. A_K (p x |K|) must then have full column rank, well apart from rank deficiency: the scaled condition estimate of
 *     N_K at most MAX_KEPT_CONDITION, kappa(A_K D) up to ~1e6. Otherwise (the numerical rank is ambiguous to the
 *     normal equations, which square it) null is returned and the rank-revealing routes on the rows decide;
 *  3. x_K = A_K^+ b_i and, for each f in F, w_f = A_K^+ a_f (a_f = A_K w_f: f's dependence on the kept columns), by
 *     N_K's factor and corrected seminormal refinement (./sparseLeastSquares.ts sparseLeastSquaresWork, as for x_LS);
 *  4. the null space of A_i is spanned by z_f = e_f - sum_k w_kf e_k, so its row space R(A_i) = null(A_i)^perp by the
 *     rows r_k = e_k + sum_f w_kf e_f (k in K): r_k . z_f = w_kf - w_kf = 0, and |K| + |F| = c. x_basic = (x_K, 0) is a
 *     local least-squares solution (A_i x_basic = A_K x_K), so {x : R x = x_K} = x_basic + null(A_i) is the set of
 *     them: the projection passes use R with b' = R x_basic = x_K, as they use independent rows A_S with b_S'.
 * With no dependent column (F empty) R is the unit rows of the support and b' = x_0 = A_i^+ b_i. R's Gram matrix is
 * I + W W^T (W the |K| x |F| coefficients), sparse as long as each dependence involves few columns; where it would
 * hold more than MAX_GRAM_GROWTH times N's entries (a column that is the sum of all others), null again.
 */
import { runSync } from '../cooperative.js';
import { currentThreadGramSolver, keptGramFactor, type GramSolver } from '../machines/placement.js';
import { multiply, selectColumns, transpose, type CsrMatrix } from '../sparse/csr.js';
import { gramMatrix } from '../sparse/gram.js';
import type { CholeskyFactor } from '../sparse/sparseCholesky.js';
import { sparseLeastSquaresWork } from './sparseLeastSquares.js';

/**
 * kappa_1(D N_K D) (D = diag(N_K)^{-1/2}, the estimate of `conditionEstimate`) up to which the kept columns are taken as
 * independent: kappa(A_K D) up to ~1e6, so the dropped columns' pivots (below ~1e-14 of their diagonal) are rounding,
 * not directions, and each seminormal correction gains at least four digits (u kappa(N_K) <= 1e-4).
 */
const MAX_KEPT_CONDITION = 1e12;
/**
 * |a_f - A_K w_f| / |a_f| above which a column the factorization dropped is not taken as dependent (a direction of
 * ~1e-6 rad, more than the dropping's ~1e-7): the normal equations cannot place it, and the routes on the rows decide.
 */
const MAX_DEPENDENCE_RESIDUAL = 1e-6;
/** Coefficients of w_f at most this fraction of its largest are rounding of zeros (the solves' ~kappa(A_K) u). */
const COEFFICIENT_DROP = 1e-13;
/** Most entries R's Gram matrix I + W W^T may gain, in multiples of N's: beyond, the routes on the rows decide. */
const MAX_GRAM_GROWTH = 2;

export interface SupportRowSpace {
  /** R: |K| rows on the support's local columns (each e_k plus its coefficients on the dependent columns). */
  readonly rows: CsrMatrix;
  /** b' = x_K = A_K^+ b_i, aligned with the rows. */
  readonly rhs: Float64Array;
  /** dim R(A_i) = |K|. */
  readonly rank: number;
}

/**
 * The row space of the p x c block `a` (on its support's local columns, every column nonzero) with right-hand side b
 * (module comment); null when the normal equations cannot decide it. `conditionEstimate` estimates kappa_1(D N D) of a
 * Gram matrix from its factor (../distributed/sparseSystem.ts scaledConditionEstimate).
 */
export function supportRowSpace(
  a: CsrMatrix,
  b: Float64Array,
  conditionEstimate: (g: CsrMatrix, factor: CholeskyFactor) => number,
): SupportRowSpace | null {
  const c = a.cols;
  const columns = transpose(a);
  const normal = gramMatrix(columns);
  // 1. N whole, else the columns its pivot-dropping factorization keeps; 2. the kept ones well conditioned.
  const whole = keptGramFactor(normal);
  if (whole === null) return null;
  if (!(conditionEstimate(whole.gram, whole.factor) <= MAX_KEPT_CONDITION)) return null;
  const kept = whole.kept ?? Int32Array.from({ length: c }, (_, j) => j);
  const aK = kept.length === c ? a : selectColumns(a, kept);
  const solver = currentThreadGramSolver(whole.factor);
  try {
    // 3. x_K, and each dropped column's coefficients on the kept ones.
    const rhs = runSync(sparseLeastSquaresWork(aK, b, solver));
    const dependent = dependentColumns(columns, kept, aK, solver);
    if (dependent === null || !gramStaysSparse(dependent, normal)) return null;
    return { rows: rowSpaceRows(kept, dependent, c), rhs, rank: kept.length };
  } finally {
    solver.release();
  }
}

/** A dropped column f and w_f = A_K^+ a_f: its nonzero coefficients, at the places of their kept columns in K. */
interface DependentColumn {
  readonly column: number;
  readonly places: Int32Array;
  readonly coefficients: Float64Array;
}

/** Each dropped column with its coefficients on the kept ones; null if one is not dependent (MAX_DEPENDENCE_RESIDUAL). */
function dependentColumns(columns: CsrMatrix, kept: Int32Array, aK: CsrMatrix, solver: GramSolver): DependentColumn[] | null {
  const c = columns.rows;
  const p = columns.cols;
  const isKept = new Uint8Array(c);
  for (const j of kept) isKept[j] = 1;
  const column = new Float64Array(p);
  const fitted = new Float64Array(p);
  const dependent: DependentColumn[] = [];
  for (let f = 0; f < c; f++) {
    if (isKept[f] === 1) continue;
    column.fill(0);
    for (let e = columns.rowPtr[f]; e < columns.rowPtr[f + 1]; e++) column[columns.colIdx[e]] = columns.values[e];
    const w = runSync(sparseLeastSquaresWork(aK, column, solver));
    // a_f within MAX_DEPENDENCE_RESIDUAL of A_K w_f, else f is a direction the normal equations cannot place.
    multiply(aK, w, fitted);
    let residual = 0;
    let size = 0;
    for (let i = 0; i < p; i++) {
      residual += (column[i] - fitted[i]) ** 2;
      size += column[i] ** 2;
    }
    if (!(residual <= MAX_DEPENDENCE_RESIDUAL ** 2 * size)) return null;
    let largest = 0;
    for (const v of w) largest = Math.max(largest, Math.abs(v));
    const places: number[] = [];
    for (let t = 0; t < w.length; t++) if (Math.abs(w[t]) > COEFFICIENT_DROP * largest) places.push(t);
    dependent.push({ column: f, places: Int32Array.from(places), coefficients: Float64Array.from(places, (t) => w[t]) });
  }
  return dependent;
}

/**
 * Whether R's Gram matrix I + W W^T stays within MAX_GRAM_GROWTH times N's entries: each dependent column couples the
 * kept columns it depends on pairwise (a dependence on many columns, or coefficients the rounding left dense, would
 * make the machine's Gram factor dense).
 */
function gramStaysSparse(dependent: readonly DependentColumn[], normal: CsrMatrix): boolean {
  let coupled = 0;
  for (const { places } of dependent) coupled += places.length * places.length;
  return coupled <= MAX_GRAM_GROWTH * normal.rowPtr[normal.rows];
}

/** R (module comment): row t = e_{kept[t]} + sum over dependent f of w_f[t] e_f, columns ascending. */
function rowSpaceRows(kept: Int32Array, dependent: readonly DependentColumn[], c: number): CsrMatrix {
  const r = kept.length;
  const extra: { column: number; value: number }[][] = Array.from({ length: r }, () => []);
  for (const { column, places, coefficients } of dependent) places.forEach((t, q) => extra[t].push({ column, value: coefficients[q] }));
  const rowPtr = new Int32Array(r + 1);
  for (let t = 0; t < r; t++) rowPtr[t + 1] = rowPtr[t] + 1 + extra[t].length;
  const colIdx = new Int32Array(rowPtr[r]);
  const values = new Float64Array(rowPtr[r]);
  for (let t = 0; t < r; t++) {
    const entries = [{ column: kept[t], value: 1 }, ...extra[t]].sort((u, v) => u.column - v.column);
    entries.forEach(({ column, value }, q) => {
      colIdx[rowPtr[t] + q] = column;
      values[rowPtr[t] + q] = value;
    });
  }
  return { rows: r, cols: c, rowPtr, colIdx, values };
}
