/**
 * The top of C^T C for a pair of machines from its coupling rows: the coupling route of ./spectrumOfS.ts
 * (cos theta_ij = sigma_max(C), C = L_a^{-1} A_a A_b^T L_b^{-T}, L_i = P_i^T L the machines' Gram factors).
 *
 * A_a A_b^T is zero outside the k_a rows of machine a and the k_b rows of machine b that share a column with
 * the other side (for boxes of a grid, the rows along their common edge). With E_a, E_b those columns of the
 * identity and F = E_a^T A_a A_b^T E_b (k_a x k_b):
 *   C = Z_a F Z_b^T,  Z = L^{-1} E,
 *   H_a = Z_a^T Z_a = E_a^T G_a^{-1} E_a,  H_b = Z_b^T Z_b = R_b^T R_b (Cholesky, R_b upper triangular),
 * so C^T C = Q_b T Q_b^T with Q_b = Z_b R_b^{-1} orthonormal and the k_b x k_b symmetric
 *   T = R_b F^T H_a F R_b^T:
 * C^T C's nonzero eigenvalues are T's (its other p_b - k_b are 0), and its top eigenvector is y = Q_b u for T's
 * top eigenvector u (Lanczos on T, or T's dense eigendecomposition when that runs out). An eigenproblem of the
 * coupling's size replaces the Krylov iteration on C^T C and the shift-invert route's factorizations of the pair's
 * joint Gram. The caller certifies y on C^T C itself.
 *
 * Z = L^{-1} E is computed on its support alone: L^{-1} e_k is nonzero only on the rows reachable from k in the
 * graph of L (k's ancestors in the elimination tree), for a box of 10^4 rows of the 2-D Poisson matrix about
 * 1200 rows for 100 to 160 coupling rows. The sweep runs over those columns of L with all right-hand sides at
 * once (each entry of L an axpy of length k).
 *
 * H_b squares Z_b's condition number (at most kappa(G_b)); the rounding that leaves in y shows in the caller's
 * certificate, which falls back to the Krylov routes when it misses.
 */
import type { Work } from '../cooperative.js';
import { KrylovWorkspace, largestEigenvalueWork, type SymmetricOperator } from '../eigen/lanczos.js';
import { symmetricEigen } from '../eigen/symmetricEigen.js';
import type { CholeskyFactor } from './sparseCholesky.js';

/** A machine's Gram factor as the coupling route reads it (B = P^T L, B B^T = G). */
export type GramFactorValues = Pick<CholeskyFactor, 'symbolic' | 'values'>;

/** The rows of L (its own numbering, ascending) on which L^{-1} P E is nonzero, and the entries of L in those columns. */
export interface FactorColumnsSupport {
  readonly rows: Int32Array;
  readonly entries: number;
}

/**
 * The support of L^{-1} P E for the machine-local rows local[0 .. count): every row reachable in the graph of L
 * (j -> i for L_ij != 0) from the rows' positions P e_r; ascending, which is an order of elimination.
 */
export function factorColumnsSupport(f: GramFactorValues, local: Int32Array, count: number): FactorColumnsSupport {
  const { n, colPtr, rowIdx, ordering } = f.symbolic;
  const mark = new Uint8Array(n);
  const stack = new Int32Array(n);
  let top = 0;
  for (let t = 0; t < count; t++) {
    const k = ordering.inverse[local[t]];
    if (mark[k] === 0) {
      mark[k] = 1;
      stack[top++] = k;
    }
  }
  let size = top;
  let entries = 0;
  while (top > 0) {
    const j = stack[--top];
    entries += colPtr[j + 1] - colPtr[j];
    for (let q = colPtr[j] + 1; q < colPtr[j + 1]; q++) {
      const i = rowIdx[q];
      if (mark[i] === 0) {
        mark[i] = 1;
        stack[top++] = i;
        size++;
      }
    }
  }
  const rows = new Int32Array(size);
  for (let i = 0, s = 0; i < n; i++) if (mark[i] === 1) rows[s++] = i;
  return { rows, entries };
}

/**
 * Z = L^{-1} P E on its support (row s of Z is row support.rows[s] of L's numbering), row-major |support| x count:
 * column t is the solve with the identity's column local[t]. A forward sweep over the support's columns of L. Row s
 * of Z is nonzero only within columns [first[s], last[s]] (the hull of the right-hand sides that reach it), and
 * the sweep and the Gram matrix work on that range alone: coupling rows listed along their common edge reach
 * overlapping runs of ancestors, so the ranges stay short below the top separators.
 */
export interface FactorColumns {
  readonly z: Float64Array;
  readonly first: Int32Array;
  readonly last: Int32Array;
}

export function inverseFactorColumns(f: GramFactorValues, support: FactorColumnsSupport, local: Int32Array, count: number): FactorColumns {
  const { n, colPtr, rowIdx, ordering } = f.symbolic;
  const values = f.values;
  const rows = support.rows;
  const size = rows.length;
  const position = new Int32Array(n);
  for (let s = 0; s < size; s++) position[rows[s]] = s;
  const z = new Float64Array(size * count);
  const first = new Int32Array(size).fill(count);
  const last = new Int32Array(size).fill(-1);
  for (let t = 0; t < count; t++) {
    const s = position[ordering.inverse[local[t]]];
    z[s * count + t] = 1;
    first[s] = Math.min(first[s], t);
    last[s] = Math.max(last[s], t);
  }
  for (let s = 0; s < size;) {
    const j = rows[s];
    if (startsSupernode(f.symbolic, rows, s)) {
      // Columns j .. j + 3 share their rows below j + 3: the in-group triangle first, then each row below is
      // updated once from the four (a quarter of the passes over Z's target rows).
      let from = count;
      let to = -1;
      for (let c = 0; c < SUPERNODE; c++) {
        from = Math.min(from, first[s + c]);
        to = Math.max(to, last[s + c]);
      }
      for (let c = 0; c < SUPERNODE; c++) {
        const base = (s + c) * count;
        const start = colPtr[j + c];
        const diagonal = values[start];
        for (let t = from; t <= to; t++) z[base + t] /= diagonal;
        for (let d = c + 1; d < SUPERNODE; d++) {
          const l = values[start + d - c];
          const target = (s + d) * count;
          for (let t = from; t <= to; t++) z[target + t] -= l * z[base + t];
        }
      }
      const b0 = s * count;
      const b1 = b0 + count;
      const b2 = b1 + count;
      const b3 = b2 + count;
      // Column j + c's rows below the group start SUPERNODE - c entries after its diagonal.
      const q0 = colPtr[j] + SUPERNODE;
      const q1 = colPtr[j + 1] + SUPERNODE - 1;
      const q2 = colPtr[j + 2] + SUPERNODE - 2;
      const q3 = colPtr[j + 3] + 1;
      const below = colPtr[j + 4] - q3;
      for (let e = 0; e < below; e++) {
        const l0 = values[q0 + e];
        const l1 = values[q1 + e];
        const l2 = values[q2 + e];
        const l3 = values[q3 + e];
        const i = position[rowIdx[q3 + e]];
        const target = i * count;
        if (from < first[i]) first[i] = from;
        if (to > last[i]) last[i] = to;
        for (let t = from; t <= to; t++) z[target + t] -= l0 * z[b0 + t] + l1 * z[b1 + t] + l2 * z[b2 + t] + l3 * z[b3 + t];
      }
      for (let c = 0; c < SUPERNODE; c++) {
        first[s + c] = from;
        last[s + c] = to;
      }
      s += SUPERNODE;
      continue;
    }
    const start = colPtr[j];
    const base = s * count;
    const from = first[s];
    const to = last[s];
    const diagonal = values[start];
    for (let t = from; t <= to; t++) z[base + t] /= diagonal;
    for (let q = start + 1; q < colPtr[j + 1]; q++) {
      const lij = values[q];
      const i = position[rowIdx[q]];
      const target = i * count;
      if (from < first[i]) first[i] = from;
      if (to > last[i]) last[i] = to;
      for (let t = from; t <= to; t++) z[target + t] -= lij * z[base + t];
    }
    s++;
  }
  return { z, first, last };
}

/** Columns the sweep takes together when they form a supernode (the same rows below the group). */
const SUPERNODE = 4;

/**
 * Whether columns rows[s] .. rows[s] + SUPERNODE - 1 of L are consecutive in the support and form a supernode: each
 * column's rows below the diagonal are the group's later columns, then exactly the last column's rows below its
 * diagonal. Checked entry by entry, since an adopted factor may leave out zero entries (./sparseCholesky.ts).
 */
function startsSupernode({ colPtr, rowIdx }: GramFactorValues['symbolic'], rows: Int32Array, s: number): boolean {
  if (s + SUPERNODE > rows.length) return false;
  const j = rows[s];
  if (rows[s + SUPERNODE - 1] !== j + SUPERNODE - 1) return false;
  const lastColumn = j + SUPERNODE - 1;
  const tail = colPtr[lastColumn] + 1;
  const below = colPtr[lastColumn + 1] - tail;
  for (let c = 0; c < SUPERNODE - 1; c++) {
    const start = colPtr[j + c];
    const inGroup = SUPERNODE - 1 - c;
    if (colPtr[j + c + 1] - start - 1 !== inGroup + below) return false;
    for (let d = 1; d <= inGroup; d++) if (rowIdx[start + d] !== j + c + d) return false;
    for (let e = 0; e < below; e++) if (rowIdx[start + 1 + inGroup + e] !== rowIdx[tail + e]) return false;
  }
  return true;
}

/** H = Z^T Z (count x count, both triangles) of a row-major Z with `size` rows, each nonzero within its range. */
function gramOfColumns({ z, first, last }: FactorColumns, size: number, count: number): Float64Array {
  const h = new Float64Array(count * count);
  let s = 0;
  // Four rows at a time over their ranges' hull (zeros outside each range): one pass over H for four.
  for (; s + 4 <= size; s += 4) {
    const from = Math.min(first[s], first[s + 1], first[s + 2], first[s + 3]);
    const to = Math.max(last[s], last[s + 1], last[s + 2], last[s + 3]);
    const b0 = s * count;
    const b1 = b0 + count;
    const b2 = b1 + count;
    const b3 = b2 + count;
    for (let i = from; i <= to; i++) {
      const a0 = z[b0 + i];
      const a1 = z[b1 + i];
      const a2 = z[b2 + i];
      const a3 = z[b3 + i];
      if (a0 === 0 && a1 === 0 && a2 === 0 && a3 === 0) continue;
      const row = i * count;
      for (let j = i; j <= to; j++) h[row + j] += a0 * z[b0 + j] + a1 * z[b1 + j] + a2 * z[b2 + j] + a3 * z[b3 + j];
    }
  }
  for (; s < size; s++) {
    const base = s * count;
    const to = last[s];
    for (let i = first[s]; i <= to; i++) {
      const zi = z[base + i];
      if (zi === 0) continue;
      const row = i * count;
      for (let j = i; j <= to; j++) h[row + j] += zi * z[base + j];
    }
  }
  for (let i = 0; i < count; i++) for (let j = 0; j < i; j++) h[i * count + j] = h[j * count + i];
  return h;
}

/** H = R^T R in place (R upper triangular in H's upper triangle, the strict lower triangle zeroed); false when a pivot is not positive. */
function choleskyUpperInPlace(h: Float64Array, k: number): boolean {
  for (let i = 0; i < k; i++) {
    let d = h[i * k + i];
    for (let l = 0; l < i; l++) d -= h[l * k + i] * h[l * k + i];
    if (!(d > 0)) return false;
    const rii = Math.sqrt(d);
    h[i * k + i] = rii;
    for (let j = i + 1; j < k; j++) {
      let s = h[i * k + j];
      for (let l = 0; l < i; l++) s -= h[l * k + i] * h[l * k + j];
      h[i * k + j] = s / rii;
    }
    for (let j = 0; j < i; j++) h[i * k + j] = 0;
  }
  return true;
}

/** Multiply-adds of the coupling route for supports and coupling sizes (the caller weighs it against the other routes). */
export function couplingRouteCost(a: FactorColumnsSupport, ka: number, b: FactorColumnsSupport, kb: number): number {
  const side = (s: FactorColumnsSupport, k: number): number => s.entries * k + (s.rows.length * k * k) / 2;
  // T = R_b F^T H_a F R_b^T (F sparse: the two triangular products dominate) and its top eigenpair (a Lanczos run
  // of a few dozen products of k_b^2, counted as k_b^3 / 2).
  return side(a, ka) + side(b, kb) + kb ** 3 + kb ** 3 / 2;
}

/** C^T C's top eigenvalue and its second (the gap to it), with the top eigenvector in the caller's y. */
export interface CouplingTop {
  readonly lambda1: number;
  readonly lambda2: number;
}

/** The coupling block F = E_a^T A_a A_b^T E_b (k_a x k_b) by its nonzeros (F couples each row to a few). */
export interface CouplingBlock {
  readonly ka: number;
  readonly kb: number;
  readonly row: Int32Array;
  readonly col: Int32Array;
  readonly value: Float64Array;
}

/**
 * T's top eigenpair: Lanczos on T (a caller's stopping test on (value, residual, gap), as the pair's other routes
 * use), at most LANCZOS_PRODUCTS_PER_ROW k_b products; past them (a tight cluster at the top) the dense
 * eigendecomposition. The eigenvector into u; lambda_2 from the gap to the second Ritz value (a Ritz value stands for
 * it, as on the other routes) or, dense, exactly.
 */
function* topOfWork(
  t: Float64Array,
  kb: number,
  u: Float64Array,
  convergedWhen: (value: number, residual: number, gap: number) => boolean,
  workspace: KrylovWorkspace,
): Work<{ lambda1: number; lambda2: number }> {
  if (kb > 1) {
    const op: SymmetricOperator = {
      size: kb,
      apply(v, out) {
        for (let i = 0; i < kb; i++) {
          let acc = 0;
          for (let j = 0; j < kb; j++) acc += t[i * kb + j] * v[j];
          out[i] = acc;
        }
      },
    };
    const top = yield* largestEigenvalueWork(op, { ritzVector: u, convergedWhen, maxIterations: LANCZOS_PRODUCTS_PER_ROW * kb }, workspace);
    if (top.converged) return { lambda1: top.value, lambda2: top.gap > 0 ? top.value - top.gap : -Infinity };
  }
  const lambdas = new Float64Array(kb);
  const vectors = t.slice();
  symmetricEigen(vectors, kb, lambdas, new Float64Array(kb));
  let first = 0;
  for (let j = 1; j < kb; j++) if (lambdas[j] > lambdas[first]) first = j;
  let lambda2 = -Infinity;
  for (let j = 0; j < kb; j++) if (j !== first) lambda2 = Math.max(lambda2, lambdas[j]);
  for (let i = 0; i < kb; i++) u[i] = vectors[i * kb + first];
  return { lambda1: lambdas[first], lambda2 };
}

/** Lanczos products on T, per coupling row of b, before the dense eigendecomposition takes over. */
const LANCZOS_PRODUCTS_PER_ROW = 2;

/**
 * y = C^T C's top eigenvector (unit, in L_b's numbering, length p_b) for the coupling rows localA[0 .. ka) of
 * machine a and localB[0 .. kb) of machine b, f their block of A_a A_b^T; null when H_b is not numerically positive
 * definite (the Krylov routes then run). `convergedWhen` is the caller's test on T's top Ritz pair. Yields between
 * its passes.
 */
export function* couplingTopWork(
  fa: GramFactorValues,
  supportA: FactorColumnsSupport,
  localA: Int32Array,
  fb: GramFactorValues,
  supportB: FactorColumnsSupport,
  localB: Int32Array,
  f: CouplingBlock,
  y: Float64Array,
  convergedWhen: (value: number, residual: number, gap: number) => boolean,
  workspace: KrylovWorkspace,
): Work<CouplingTop | null> {
  const { ka, kb } = f;
  const columnsB = inverseFactorColumns(fb, supportB, localB, kb);
  const r = gramOfColumns(columnsB, supportB.rows.length, kb);
  if (!choleskyUpperInPlace(r, kb)) return null;
  yield undefined;
  const ha = gramOfColumns(inverseFactorColumns(fa, supportA, localA, ka), supportA.rows.length, ka);
  yield undefined;
  // W = F^T H_a F (kb x kb, symmetric) through (H_a F)^T = F^T H_a (kb x ka): row j of it sums rows l of H_a.
  const fth = new Float64Array(kb * ka);
  for (let e = 0; e < f.value.length; e++) {
    const v = f.value[e];
    const l = f.row[e];
    const target = f.col[e] * ka;
    for (let i = 0; i < ka; i++) fth[target + i] += v * ha[l * ka + i];
  }
  const w = new Float64Array(kb * kb);
  for (let j = 0; j < kb; j++) for (let e = 0; e < f.value.length; e++) w[j * kb + f.col[e]] += fth[j * ka + f.row[e]] * f.value[e];
  // T = R_b W R_b^T: X = R_b W, then T = X R_b^T, symmetrized.
  const x = new Float64Array(kb * kb);
  for (let i = 0; i < kb; i++) {
    for (let l = i; l < kb; l++) {
      const ril = r[i * kb + l];
      for (let j = 0; j < kb; j++) x[i * kb + j] += ril * w[l * kb + j];
    }
  }
  const t = new Float64Array(kb * kb);
  for (let i = 0; i < kb; i++) {
    for (let j = 0; j <= i; j++) {
      let s1 = 0;
      for (let l = j; l < kb; l++) s1 += x[i * kb + l] * r[j * kb + l];
      let s2 = 0;
      for (let l = i; l < kb; l++) s2 += x[j * kb + l] * r[i * kb + l];
      t[i * kb + j] = t[j * kb + i] = (s1 + s2) / 2;
    }
  }
  yield undefined;
  const u = new Float64Array(kb);
  const top = yield* topOfWork(t, kb, u, convergedWhen, workspace);
  // C^T C's other eigenvalues: T's, and p_b - k_b zeros.
  const lambda2 = Math.max(top.lambda2, kb < fb.symbolic.n ? 0 : -Infinity);
  // y = Z_b R_b^{-1} u.
  for (let i = kb - 1; i >= 0; i--) {
    let s = u[i];
    for (let l = i + 1; l < kb; l++) s -= r[i * kb + l] * u[l];
    u[i] = s / r[i * kb + i];
  }
  y.fill(0);
  const rows = supportB.rows;
  const zb = columnsB.z;
  let norm2 = 0;
  for (let s = 0; s < rows.length; s++) {
    let v = 0;
    for (let j = columnsB.first[s]; j <= columnsB.last[s]; j++) v += zb[s * kb + j] * u[j];
    y[rows[s]] = v;
    norm2 += v * v;
  }
  const scale = 1 / Math.sqrt(norm2);
  for (const row of rows) y[row] *= scale;
  return { lambda1: top.lambda1, lambda2 };
}
