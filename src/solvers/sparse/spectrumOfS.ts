// Past 500 lines: the column slots and overlap graph, and the pair angle with its three routes (the coupling block,
// shift-invert through the joint Gram, plain Lanczos on C^T C) sharing one certificate and sine route.
/**
 * The machines' column slots of a CSR partition (which machines touch which columns: the overlapping
 * pairs, the overlap graph) and the principal angles theta_ij on the sparse path (docs/SPEC.md
 * "Heterogeneity metrics"), from A's CSR rows, the partition and callbacks that solve with each
 * machine's Gram factor L_i (L_i L_i^T = G_i = A_i A_i^T, e.g. a sparse Cholesky with its permutation
 * folded in: L_i = P_i^T L), so nothing here depends on how the machines store their factors. The
 * spectrum of S on the same slots and factors is ../analysis/kappaS.ts'.
 *
 * cos theta_ij = sigma_max(C), C = L_i^{-1} A_i A_j^T L_j^{-T}, by Lanczos on C^T C on the side with
 *   fewer rows (p_b x p_b). With the top Ritz vector y: q = Q_b y = A_b^T L_b^{-T} y (Q_b an
 *   orthonormal basis of R(A_b)), c = |L_a^{-1} A_a q| = |C y| and s = |(I - P_a) q|, with
 *   P_a q = A_a^T L_a^{-T} (L_a^{-1} A_a q) the projection onto R(A_a); theta = atan2(s, c). s is the
 *   norm of a residual computed directly (the sine route, as the dense path's
 *   sigma_min(Q_b - Q_a Q_a^T Q_b) in principalAngles.ts), so tiny angles keep their digits where
 *   arccos(c) would lose them all below ~1e-8 rad. Pairs whose column supports are disjoint have
 *   C = 0: theta = pi/2 exactly, without any computation (overlappingMachinePairs lists the others).
 *
 * Coupling route (when the caller's solves carry `factorValues`, and p_b > 40): A_a A_b^T is zero outside the rows
 *   of each side that share a column with the other (k_a and k_b of them, the rows along boxes' common edge), so
 *   C^T C has rank <= k_b and its nonzero eigenvalues are those of a k_b x k_b matrix T formed from the machines'
 *   own factors (./couplingBlock.ts: k_a + k_b sparse triangular solves on their supports, two small Gram matrices).
 *   T's top eigenvector gives y, certified on C^T C with one product as below. It runs when it costs at most
 *   COUPLING_ROUTE_BUDGET times the two machines' factorizations (boxes; contiguous strips of a grid couple
 *   through whole rows of the grid and take the shift-invert route), else, or when the certificate misses, the
 *   routes below run from its y.
 *
 * Shift-invert route (when the caller's solves carry `joint`, and p_b > 40): the top of C^T C is
 *   clustered (Poisson strips: ~500 plain Lanczos products per pair at n = 250,000, ~1500 at 10^6), so
 *   the top vector y is found first by Lanczos on M_sigma = L_b^T S_sigma^{-1} L_b, whose eigenvalues
 *   are 1 / (sigma - lambda_k(C^T C)): S_sigma = sigma G_b - A_b A_a^T G_a^{-1} A_a A_b^T is the Schur
 *   complement of G_sigma = [[G_a, A_a A_b^T], [A_b A_a^T, sigma G_b]] (the pair's joint Gram with G_b
 *   scaled), so S_sigma^{-1} is the (b, b) block of G_sigma^{-1}: one sparse Cholesky of G_sigma per
 *   shift, positive definite iff sigma > lambda_1 (a failed factorization backs the shift off). sigma = 1
 *   first (G itself), 20 steps; then sigma = lambda_1_hat + (sigma - lambda_1_hat) / 100 from the
 *   start of y, where lambda_1 stands out by (sigma - lambda_2) / (sigma - lambda_1): typically 2 shifts
 *   and ~35 products per pair. The vector is then certified on C^T C itself with one product:
 *   rho = y^T C^T C y, r = |C^T C y - rho y| and delta = min(r, r^2 / (rho - lambda_2)) with lambda_2 =
 *   sigma - 1 / mu_2 from the last shift's second Ritz value (as below, a Ritz value stands for
 *   lambda_2); s and c then come from y by the sine route as below. When G is singular to working
 *   precision (theta near sqrt(eps) or below), or the certificate misses the tolerance, Lanczos on
 *   C^T C runs (from y when there is one).
 *
 * Error bound of theta: an absolute bound from the Ritz residual (../eigen/lanczos.ts): y is a unit vector, so
 * c_hat^2 = |C y|^2 <= cos^2 theta, and cos^2 theta - c_hat^2 <= delta = min(rho, rho^2 / gap)
 * (Kato-Temple with the gap to the second Ritz value: unlike S, C^T C is only p_b x p_b and is
 * usually exhausted, and without the quadratic refinement a 1e-7 rad angle could not be certified:
 * rho >= ~eps would allow an error of eps / (2 theta)); hence
 * the exact angle lies in [atan2(sqrt(s_hat^2 - delta), sqrt(c_hat^2 + delta)), theta_hat] (s_hat,
 * c_hat normalized to s_hat^2 + c_hat^2 = 1). As there, the rounding of the operators (about
 * eps kappa(L_i) kappa(L_j)) is not included. Limitation: when the two smallest angles of a pair
 * are both tiny and within ~eps / theta^2 relative of each other, C^T C cannot separate them and
 * theta lands between the two (the dense path's bidiagonalization of Q_b - Q_a G resolves them; a small pair left
 * unconverged takes that route on its own rows, ../analysis/csrPairAngle.ts).
 */
import { runSync, type Work } from '../cooperative.js';
import { DimensionMismatchError, SingularMatrixError } from '../errors.js';
import { selectRows, zeroedArray, type ArrayPlace, type CsrMatrix } from './csr.js';
import { gramMatrix } from './gram.js';
import { couplingRouteCost, couplingTopWork, factorColumnsSupport, type CouplingTop, type GramFactorValues } from './couplingBlock.js';
import type { SpectralEstimate } from '../eigen/eigenvalueEstimate.js';
import {
  DEFAULT_SPECTRUM_TOLERANCE,
  KrylovWorkspace,
  largestEigenvalueWork,
  type EigenvalueEstimate,
  type LargestEigenvalueOptions,
  type SymmetricOperator,
} from '../eigen/lanczos.js';

/**
 * Solves with the machines' Gram factors, L_i L_i^T = A_i A_i^T, vectors of length p_i over machine
 * i's rows in ascending global order. Input and output may be the same array.
 */
export interface GramFactorSolves {
  /** y = L_i^{-1} b. */
  solveL(machine: number, b: Float64Array, y: Float64Array): void;
  /** x = L_i^{-T} y. */
  solveLT(machine: number, y: Float64Array, x: Float64Array): void;
  /** The pairs' shift-invert route (module comment); absent: Lanczos on C^T C alone. */
  readonly joint?: JointGramSolves;
  /** Machine i's factor itself, for the pairs' coupling route (module comment); absent: no coupling route. */
  readonly factorValues?: (machine: number) => GramFactorValues;
}

/** What the pairs' shift-invert route needs beyond the solves: the factors as operators and a factorizer. */
export interface JointGramSolves {
  /** out = L_i u (the factor itself, L_i L_i^T = G_i). */
  multiplyL(machine: number, u: Float64Array, out: Float64Array): void;
  /** out = L_i^T y. */
  multiplyLT(machine: number, y: Float64Array, out: Float64Array): void;
  /**
   * Cholesky of g (full symmetric pattern): its solve x = g^{-1} b (b and x may be the same array), and
   * its release once the shift's solves are done; throws SingularMatrixError when g is not (numerically)
   * positive definite.
   */
  factor(g: CsrMatrix): { solve(b: Float64Array, x: Float64Array): void; release(): void };
}

/**
 * Which machines touch which columns of A, built once per (A, partition): for each column c the
 * distinct machines holding an entry in it (ascending, slots slotPtr[c] .. slotPtr[c + 1]) and, for
 * each stored entry of A, its slot (column, machine of its row). O(nnz + n) memory.
 */
export interface MachineColumnSlots {
  readonly a: CsrMatrix;
  /** Machine i's rows, ascending. */
  readonly rowsOfMachine: readonly Int32Array[];
  readonly machineOfRow: Int32Array;
  /** Position of each row within its machine's rows. */
  readonly localIndexOfRow: Int32Array;
  readonly slotPtr: Int32Array;
  readonly slotMachine: Int32Array;
  /** Per stored entry of A (CSR order): its slot. */
  readonly slotOfEntry: Int32Array;
  /** No column is shared by two machines: every off-diagonal block of A A^T is zero. */
  readonly blockDiagonal: boolean;
}

/**
 * `place` (../sparse/csr.ts ArrayPlace): where its own arrays are made, in shared memory for a task pool's threads (which
 * then copy none of them; at n = 10^6 they are 0.1 GB).
 */
export function machineColumnSlots(a: CsrMatrix, rowsOfMachine: readonly Int32Array[], place: ArrayPlace = false): MachineColumnSlots {
  const n = a.rows;
  const m = rowsOfMachine.length;
  const machineOfRow = zeroedArray(Int32Array, n, place).fill(-1);
  const localIndexOfRow = zeroedArray(Int32Array, n, place);
  for (let i = 0; i < m; i++) {
    const rows = rowsOfMachine[i];
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k];
      if (!(r >= 0 && r < n) || machineOfRow[r] !== -1 || (k > 0 && r <= rows[k - 1])) {
        throw new DimensionMismatchError(
          `Machine ${i}'s row list is not ascending, in range and disjoint from the others' at entry ${k} (row ${r}).`,
          {
            machine: i,
            entry: k,
            row: r,
          },
        );
      }
      machineOfRow[r] = i;
      localIndexOfRow[r] = k;
    }
  }
  for (let r = 0; r < n; r++) if (machineOfRow[r] === -1) throw new DimensionMismatchError(`Row ${r} belongs to no machine.`, { row: r });

  const { rowPtr, colIdx } = a;
  const cols = a.cols;
  // Machines are visited in ascending order, so each column's slot list comes out ascending; the
  // last machine seen per column tells whether (column, machine) already has its slot.
  const lastMachine = new Int32Array(cols).fill(-1);
  const slotCount = new Int32Array(cols + 1);
  for (let i = 0; i < m; i++) {
    for (const r of rowsOfMachine[i]) {
      for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
        const c = colIdx[p];
        if (lastMachine[c] !== i) {
          lastMachine[c] = i;
          slotCount[c + 1]++;
        }
      }
    }
  }
  const slotPtr = zeroedArray(Int32Array, cols + 1, place);
  let blockDiagonal = true;
  for (let c = 0; c < cols; c++) {
    slotPtr[c + 1] = slotPtr[c] + slotCount[c + 1];
    if (slotCount[c + 1] > 1) blockDiagonal = false;
  }
  const slotMachine = zeroedArray(Int32Array, slotPtr[cols], place);
  const slotOfEntry = zeroedArray(Int32Array, rowPtr[n], place);
  const filled = new Int32Array(cols);
  lastMachine.fill(-1);
  for (let i = 0; i < m; i++) {
    for (const r of rowsOfMachine[i]) {
      for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
        const c = colIdx[p];
        if (lastMachine[c] !== i) {
          lastMachine[c] = i;
          slotMachine[slotPtr[c] + filled[c]++] = i;
        }
        slotOfEntry[p] = slotPtr[c] + filled[c] - 1;
      }
    }
  }
  return { a, rowsOfMachine, machineOfRow, localIndexOfRow, slotPtr, slotMachine, slotOfEntry, blockDiagonal };
}

/** Machine pairs (i < j) whose column supports overlap, flattened [i0, j0, i1, j1, ...], ascending. */
export function overlappingMachinePairs(slots: MachineColumnSlots): Int32Array {
  const m = slots.rowsOfMachine.length;
  const { slotPtr, slotMachine } = slots;
  const cols = slots.a.cols;
  // Partners of machine i found through the columns' slot lists, deduplicated with a stamp.
  const partners: number[][] = Array.from({ length: m }, () => []);
  const seen = new Int32Array(m).fill(-1);
  // Columns of each machine: its slots grouped by machine.
  const columnsOf: number[][] = Array.from({ length: m }, () => []);
  for (let c = 0; c < cols; c++) for (let t = slotPtr[c]; t < slotPtr[c + 1]; t++) columnsOf[slotMachine[t]].push(c);
  for (let i = 0; i < m; i++) {
    for (const c of columnsOf[i]) {
      for (let t = slotPtr[c]; t < slotPtr[c + 1]; t++) {
        const j = slotMachine[t];
        if (j > i && seen[j] !== i) {
          seen[j] = i;
          partners[i].push(j);
        }
      }
    }
  }
  let count = 0;
  for (const list of partners) count += list.length;
  const out = new Int32Array(2 * count);
  let q = 0;
  for (let i = 0; i < m; i++) {
    partners[i].sort((x, y) => x - y);
    for (const j of partners[i]) {
      out[q++] = i;
      out[q++] = j;
    }
  }
  return out;
}

/**
 * The overlapping pairs (overlappingMachinePairs' list, found here with the columns each pair shares) split by a
 * dimension count: machine i's rows are linearly independent (each has a Gram factor), so R(A_i) has dimension r_i =
 * its row count, inside the span of the columns it touches; when r_i + r_j exceeds the columns the two touch together,
 * R(A_i) and R(A_j) share a direction and theta_ij = 0 exactly (a tall system whose machines hold more samples than
 * features: every pair). `intersecting` lists those, `computed` the others, each flattened and ascending.
 * O(sum_c k_c^2) for k_c machines on column c.
 */
export function pairsByDimensionCount(slots: MachineColumnSlots): { computed: Int32Array; intersecting: Int32Array } {
  const m = slots.rowsOfMachine.length;
  const { slotPtr, slotMachine } = slots;
  const cols = slots.a.cols;
  const support = new Int32Array(m);
  for (let t = 0; t < slotPtr[cols]; t++) support[slotMachine[t]]++;
  // shared(i * m + j), j > i: the columns i and j both touch, counted over each column's (ascending) slot list; its keys
  // are the overlapping pairs.
  const shared = new Map<number, number>();
  for (let c = 0; c < cols; c++) {
    for (let s = slotPtr[c]; s < slotPtr[c + 1]; s++) {
      const base = slotMachine[s] * m;
      for (let t = s + 1; t < slotPtr[c + 1]; t++) {
        const key = base + slotMachine[t];
        shared.set(key, (shared.get(key) ?? 0) + 1);
      }
    }
  }
  const computed: number[] = [];
  const intersecting: number[] = [];
  // Ascending keys are the pairs in lexicographic order.
  for (const key of Float64Array.from(shared.keys()).sort()) {
    const i = Math.floor(key / m);
    const j = key - i * m;
    const union = support[i] + support[j] - shared.get(key)!;
    const list = slots.rowsOfMachine[i].length + slots.rowsOfMachine[j].length > union ? intersecting : computed;
    list.push(i, j);
  }
  return { computed: Int32Array.from(computed), intersecting: Int32Array.from(intersecting) };
}

/**
 * The colours of a greedy colouring of the machines' overlap graph (machines in index order, each the least colour
 * its earlier neighbours leave). Machines of one colour have disjoint column supports, so their row spaces are
 * orthogonal and their projections sum to a projection: lambda_max(S) <= this count.
 */
export function overlapColourCount(slots: MachineColumnSlots, pairs: Int32Array = overlappingMachinePairs(slots)): number {
  const m = slots.rowsOfMachine.length;
  const neighbours: number[][] = Array.from({ length: m }, () => []);
  for (let q = 0; q < pairs.length; q += 2) neighbours[Math.max(pairs[q], pairs[q + 1])].push(Math.min(pairs[q], pairs[q + 1]));
  const colour = new Int32Array(m);
  let colours = 0;
  for (let i = 0; i < m; i++) {
    const taken = new Set(neighbours[i].map((j) => colour[j]));
    let c = 0;
    while (taken.has(c)) c++;
    colour[i] = c;
    colours = Math.max(colours, c + 1);
  }
  return colours;
}

/**
 * A 2-colouring of the machines' overlap graph (i ~ j when their column supports overlap: a superset
 * of the pairs with A_i A_j^T != 0), side 0 or 1 per machine, or null when the graph has an odd cycle.
 */
export function overlapTwoColouring(slots: MachineColumnSlots, pairs: Int32Array = overlappingMachinePairs(slots)): Uint8Array | null {
  const m = slots.rowsOfMachine.length;
  const neighbours: number[][] = Array.from({ length: m }, () => []);
  for (let q = 0; q < pairs.length; q += 2) {
    neighbours[pairs[q]].push(pairs[q + 1]);
    neighbours[pairs[q + 1]].push(pairs[q]);
  }
  const UNSEEN = 2;
  const side = new Uint8Array(m).fill(UNSEEN);
  const queue = new Int32Array(m);
  for (let start = 0; start < m; start++) {
    if (side[start] !== UNSEEN) continue;
    side[start] = 0;
    let head = 0;
    let tail = 0;
    queue[tail++] = start;
    while (head < tail) {
      const i = queue[head++];
      for (const j of neighbours[i]) {
        if (side[j] === UNSEEN) {
          side[j] = 1 - side[i];
          queue[tail++] = j;
        } else if (side[j] === side[i]) {
          return null;
        }
      }
    }
  }
  return side;
}

/** The most rows any machine holds (the length of a machine-local buffer). */
export function largestMachine(slots: MachineColumnSlots): number {
  let p = 0;
  for (const rows of slots.rowsOfMachine) p = Math.max(p, rows.length);
  return p;
}

export interface SparsePairAngle {
  theta: number;
  /** sigma_max(L_i^{-1} A_i A_j^T L_j^{-T}) (0 for disjoint supports). */
  cos: number;
  /** 'structural' for disjoint supports (theta = pi/2 exactly). */
  method: SpectralEstimate['method'];
  /** |theta - exact| <= absoluteErrorBound (module comment). */
  absoluteErrorBound: number;
  iterations: number;
  converged: boolean;
}

/**
 * cos^2 theta - c_hat^2 <= delta from the top Ritz pair of C^T C: the residual bound, or Kato-Temple's
 * rho^2 / gap when the gap to the next Ritz value is positive (see the module comment).
 */
function cosineSquaredBound(residual: number, gap: number): number {
  const temple = gap > 0 ? (residual * residual) / gap : Infinity;
  return Math.min(residual, temple);
}

/** Below this bound on |cos^2 - c_hat^2| the angle is known to ~1e-13 rad at any angle. */
const COSINE_SQUARED_FLOOR = 1e-26;

/**
 * Buffers of the pair-angle computations, allocated once for all pairs of a system: column-length
 * accumulators (touched only on the pair's supports and cleared after use), machine-length vectors
 * and the Krylov workspace.
 */
export class PairAngleContext {
  readonly columnValues: Float64Array;
  readonly columnStamp: Int32Array;
  private stamp = 0;
  readonly localA: Float64Array;
  readonly localB: Float64Array;
  /** Local indices of each side's rows that touch the other side's column support (the pair's coupling rows). */
  readonly couplingA: Int32Array;
  readonly couplingB: Int32Array;
  readonly ritz: Float64Array;
  /** The shift-invert route's vector over both machines' rows (empty without factors.joint). */
  readonly jointValues: Float64Array;
  readonly workspace = new KrylovWorkspace();

  constructor(
    readonly slots: MachineColumnSlots,
    readonly factors: GramFactorSolves,
  ) {
    const p = largestMachine(slots);
    this.columnValues = new Float64Array(slots.a.cols);
    this.columnStamp = new Int32Array(slots.a.cols);
    this.localA = new Float64Array(p);
    this.localB = new Float64Array(p);
    this.couplingA = new Int32Array(p);
    this.couplingB = new Int32Array(p);
    this.ritz = new Float64Array(p);
    this.jointValues = new Float64Array(factors.joint === undefined ? 0 : 2 * p);
  }

  nextStamp(): number {
    return ++this.stamp;
  }
}

/** w += A_i^T x over the rows rows[local[t]], t < count (x local, w column-length). */
function scatterTransposedOf(a: CsrMatrix, rows: Int32Array, local: Int32Array, count: number, x: Float64Array, w: Float64Array): void {
  const { rowPtr, colIdx, values } = a;
  for (let t = 0; t < count; t++) {
    const k = local[t];
    const xk = x[k];
    if (xk === 0) continue;
    const r = rows[k];
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) w[colIdx[p]] += values[p] * xk;
  }
}

/** y = A_i w on the rows rows[local[t]], t < count, and 0 on machine i's other rows. */
function gatherRowsOf(a: CsrMatrix, rows: Int32Array, local: Int32Array, count: number, w: Float64Array, y: Float64Array): void {
  const { rowPtr, colIdx, values } = a;
  y.fill(0);
  for (let t = 0; t < count; t++) {
    const k = local[t];
    const r = rows[k];
    let acc = 0;
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) acc += values[p] * w[colIdx[p]];
    y[k] = acc;
  }
}

/** w = 0 on the columns of the rows rows[local[t]], t < count. */
function clearSupportOf(a: CsrMatrix, rows: Int32Array, local: Int32Array, count: number, w: Float64Array): void {
  const { rowPtr, colIdx } = a;
  for (let t = 0; t < count; t++) {
    const r = rows[local[t]];
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) w[colIdx[p]] = 0;
  }
}

/**
 * Local indices of `rows` touching a column stamped `stamp` into `out`; their count. Only these rows
 * couple the pair: A_a A_b^T is zero in every other row of A_a (and column of A_b^T).
 */
function rowsTouching(a: CsrMatrix, rows: Int32Array, marks: Int32Array, stamp: number, out: Int32Array): number {
  const { rowPtr, colIdx } = a;
  let count = 0;
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k];
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
      if (marks[colIdx[p]] === stamp) {
        out[count++] = k;
        break;
      }
    }
  }
  return count;
}

/** Marks machine i's column support with a new stamp; the stamp. */
function stampSupport(context: PairAngleContext, rows: Int32Array): number {
  const { rowPtr, colIdx } = context.slots.a;
  const stamp = context.nextStamp();
  const marks = context.columnStamp;
  for (const r of rows) for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) marks[colIdx[p]] = stamp;
  return stamp;
}

/** w += A_i^T x over machine i's rows (x local, w column-length). */
function scatterTransposed(a: CsrMatrix, rows: Int32Array, x: Float64Array, w: Float64Array): void {
  const { rowPtr, colIdx, values } = a;
  for (let k = 0; k < rows.length; k++) {
    const xk = x[k];
    if (xk === 0) continue;
    const r = rows[k];
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) w[colIdx[p]] += values[p] * xk;
  }
}

/** y = A_i w over machine i's rows. */
function gatherRows(a: CsrMatrix, rows: Int32Array, w: Float64Array, y: Float64Array): void {
  const { rowPtr, colIdx, values } = a;
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k];
    let acc = 0;
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) acc += values[p] * w[colIdx[p]];
    y[k] = acc;
  }
}

/** At most this many rows, Lanczos on C^T C exhausts its space within as many products, exact: no shift-invert. */
const SHIFT_MIN_ROWS = 40;
/** Lanczos steps per shift of the shift-invert route before the shift moves closer. */
const SHIFT_ROUND = 20;
/** Each new shift sits this many times closer to lambda_1's estimate: sigma' - lambda_1 = (sigma - lambda_1) / SHIFT_APPROACH. */
const SHIFT_APPROACH = 100;
/** Shifts (factorizations that succeed) before the route gives up to plain Lanczos. */
const SHIFT_ROUNDS = 6;

/**
 * The coupling route runs while its multiply-adds (couplingRouteCost) are at most this many times those of the
 * pair's two machine factorizations. The shift-invert route factors the pair's joint Gram (dearer than both machines'
 * together) about twice and takes ~35 products. Measured on the first 60 pairs of the TypeScript multilevel boxes of
 * the 2-D Poisson matrix n = 10^6, m = 100 (each route forced; ratios 0.02 to 2.7): the coupling route took 17-197 ms
 * against the shift-invert route's 252-513 ms on the TypeScript backend, 12-200 ms against 109-273 ms on the native
 * one (CHOLMOD's joint factorizations), and was the faster on every pair; contiguous strips of the same matrix
 * (2000 coupling rows a side) are at ratio ~5000 and keep the shift-invert route.
 */
const COUPLING_ROUTE_BUDGET = 3;

/**
 * The top Ritz vector y of C^T C by the shift-invert route (module comment): Lanczos on
 * M_sigma = L_b^T S_sigma^{-1} L_b, S_sigma^{-1} the (b, b) block of G_sigma^{-1}, whose eigenvalues are
 * 1 / (sigma - lambda_k(C^T C)). `accurate(cos2, delta)` is the caller's test on the bound
 * delta = min(r, r^2 / gap) mapped to C^T C: for a Ritz pair (mu, y) of M_sigma with residual rho,
 * C^T C y - (sigma - 1/mu) y = (sigma - C^T C) r / mu, so r <= sigma rho / mu, and the gap is
 * 1 / mu_2 - 1 / mu. Returns lambda_2 = sigma - 1 / mu_2 of the last shift (the caller's gap) and the
 * products taken; not converged when the shifts ran out.
 */
function* shiftInvertTopWork(
  context: PairAngleContext,
  joint: JointGramSolves,
  ia: number,
  ib: number,
  accurate: (cos2: number, delta: number) => boolean,
  y: Float64Array,
  options: LargestEigenvalueOptions,
): Work<{ converged: boolean; lambda2: number; iterations: number }> {
  const a = context.slots.a;
  const rowsA = context.slots.rowsOfMachine[ia];
  const rowsB = context.slots.rowsOfMachine[ib];
  const pa = rowsA.length;
  const pb = rowsB.length;
  // The pair's rows ascending (selectRows' order); positionB[k]: where machine b's k-th row lands.
  const rows = new Int32Array(pa + pb);
  const positionB = new Int32Array(pb);
  const inB = new Uint8Array(pa + pb);
  for (let t = 0, ka = 0, kb = 0; t < pa + pb; t++) {
    if (kb < pb && (ka === pa || rowsB[kb] < rowsA[ka])) {
      rows[t] = rowsB[kb];
      positionB[kb++] = t;
      inB[t] = 1;
    } else {
      rows[t] = rowsA[ka++];
    }
  }
  // G = [A_a; A_b][A_a; A_b]^T (rows interleaved); G_sigma scales its (b, b) block G_b by sigma.
  const g = gramMatrix(selectRows(a, rows));
  const values = g.values.slice();
  const blockB: number[] = [];
  for (let r = 0; r < pa + pb; r++) {
    if (inB[r] === 0) continue;
    for (let p = g.rowPtr[r]; p < g.rowPtr[r + 1]; p++) if (inB[g.colIdx[p]] === 1) blockB.push(p);
  }
  const x = context.jointValues.subarray(0, pa + pb);
  const xb = context.localA.subarray(0, pb);
  let sigma = 1;
  let factored = NaN;
  let iterations = 0;
  let lambda2 = -Infinity;
  for (let round = 0; round < SHIFT_ROUNDS;) {
    g.values.set(values);
    for (const p of blockB) g.values[p] *= sigma;
    let factor: ReturnType<JointGramSolves['factor']>;
    try {
      factor = joint.factor(g);
    } catch (error) {
      if (!(error instanceof SingularMatrixError)) throw error;
      // G itself numerically singular (an angle near sqrt(eps) or below): plain Lanczos, whose sine route keeps those.
      if (Number.isNaN(factored)) return { converged: false, lambda2, iterations };
      // sigma at or below lambda_1 (G_sigma indefinite): back off halfway to the last shift that factored.
      sigma = (sigma + factored) / 2;
      continue;
    }
    factored = sigma;
    round++;
    const shift = sigma;
    const inverse: SymmetricOperator = {
      size: pb,
      apply(u, out) {
        x.fill(0);
        joint.multiplyL(ib, u, xb);
        for (let k = 0; k < pb; k++) x[positionB[k]] = xb[k];
        factor.solve(x, x);
        for (let k = 0; k < pb; k++) xb[k] = x[positionB[k]];
        joint.multiplyLT(ib, xb, out);
      },
    };
    let top: EigenvalueEstimate;
    try {
      top = yield* largestEigenvalueWork(
        inverse,
        {
          ...options,
          ritzVector: y,
          startVector: iterations > 0 ? y : undefined,
          maxIterations: round < SHIFT_ROUNDS ? SHIFT_ROUND : options.maxIterations,
          convergedWhen: (mu, residual, gap) => {
            const r = (shift * residual) / mu;
            return accurate(shift - 1 / mu, cosineSquaredBound(r, gap > 0 && gap < mu ? 1 / (mu - gap) - 1 / mu : 0));
          },
        },
        context.workspace,
      );
    } finally {
      // One factor a shift, and up to SHIFT_ROUNDS a pair: each let go of as soon as its solves are done.
      factor.release();
    }
    iterations += top.iterations;
    const lambda1 = sigma - 1 / top.value;
    lambda2 = top.gap > 0 && top.gap < top.value ? sigma - 1 / (top.value - top.gap) : -Infinity;
    if (top.converged) return { converged: true, lambda2, iterations };
    sigma = lambda1 + (sigma - lambda1) / SHIFT_APPROACH;
  }
  return { converged: false, lambda2, iterations };
}

/**
 * theta_ij (module comment) for machines i != j. Disjoint supports give pi/2 exactly; otherwise
 * Lanczos on C^T C over the machine with fewer rows, stopped when the bound on cos^2 theta is at most
 * `tolerance` times min(cos^2, sin^2) (or COSINE_SQUARED_FLOOR).
 */
export function* sparsePairAngleWork(
  context: PairAngleContext,
  i: number,
  j: number,
  options: LargestEigenvalueOptions = {},
): Work<SparsePairAngle> {
  const { slots, factors } = context;
  const a = slots.a;
  const w = context.columnValues;
  const rowsI = slots.rowsOfMachine[i];
  const rowsJ = slots.rowsOfMachine[j];
  // b: the side with fewer rows (the Lanczos operator's size); a: the other one.
  const [ia, ib] = rowsJ.length <= rowsI.length ? [i, j] : [j, i];
  const rowsA = slots.rowsOfMachine[ia];
  const rowsB = slots.rowsOfMachine[ib];
  if (!supportsOverlap(context, rowsA, rowsB)) {
    return { theta: Math.PI / 2, cos: 0, method: 'structural', absoluteErrorBound: 0, iterations: 0, converged: true };
  }
  const pa = rowsA.length;
  const pb = rowsB.length;
  const za = context.localA.subarray(0, pa);
  const ub = context.localB.subarray(0, pb);
  // The products with A_a and A_b run over the coupling rows only (for strips of a grid, the rows next
  // to the shared boundary): the other rows meet only zeros of w and give exact zeros, so the values are
  // the same to the bit as over all rows.
  const couplingA = context.couplingA;
  const couplingB = context.couplingB;
  const countA = rowsTouching(a, rowsA, context.columnStamp, stampSupport(context, rowsB), couplingA);
  const countB = rowsTouching(a, rowsB, context.columnStamp, stampSupport(context, rowsA), couplingB);
  const op: SymmetricOperator = {
    size: pb,
    apply(y, out) {
      factors.solveLT(ib, y, ub);
      scatterTransposedOf(a, rowsB, couplingB, countB, ub, w);
      gatherRowsOf(a, rowsA, couplingA, countA, w, za);
      clearSupportOf(a, rowsB, couplingB, countB, w);
      factors.solveL(ia, za, za);
      factors.solveLT(ia, za, za);
      scatterTransposedOf(a, rowsA, couplingA, countA, za, w);
      gatherRowsOf(a, rowsB, couplingB, countB, w, ub);
      clearSupportOf(a, rowsA, couplingA, countA, w);
      factors.solveL(ib, ub, out);
    },
  };
  const tolerance = options.tolerance ?? DEFAULT_SPECTRUM_TOLERANCE;
  const y = context.ritz.subarray(0, pb);
  const accurate = (cos2: number, delta: number): boolean =>
    delta <= Math.max(tolerance * Math.min(Math.max(1 - cos2, 0), cos2), COSINE_SQUARED_FLOOR);
  // The test on a Ritz pair of C^T C (or of T, its coupling block's image), its bound from residual and gap.
  const ritzAccurate = (cos2: number, residual: number, gap: number): boolean => accurate(cos2, cosineSquaredBound(residual, gap));
  let delta = Infinity;
  let iterations = 0;
  let method: SpectralEstimate['method'] = 'lanczos';
  let converged = false;
  // y certified on C^T C itself: rho = y^T C^T C y, r = |C^T C y - rho y| (one product), Kato-Temple with the gap
  // to the route's lambda_2.
  const certified = (lambda2: number): boolean => {
    const t = context.localB.subarray(0, pb);
    op.apply(y, t);
    iterations++;
    let rho = 0;
    for (let k = 0; k < pb; k++) rho += y[k] * t[k];
    let r2 = 0;
    for (let k = 0; k < pb; k++) r2 += (t[k] - rho * y[k]) ** 2;
    delta = cosineSquaredBound(Math.sqrt(r2), rho - lambda2);
    return accurate(rho, delta);
  };
  if (factors.factorValues !== undefined && pb > SHIFT_MIN_ROWS) {
    const top = yield* couplingRouteWork(context, factors.factorValues, ia, ib, countA, countB, y, ritzAccurate);
    if (top !== null && certified(top.lambda2)) {
      method = 'coupling-block';
      converged = true;
    }
  }
  if (!converged && factors.joint !== undefined && pb > SHIFT_MIN_ROWS) {
    const shifted = yield* shiftInvertTopWork(context, factors.joint, ia, ib, accurate, y, options);
    iterations += shifted.iterations;
    // lambda_2 = sigma - 1 / mu_2 of the last shift.
    if (shifted.converged && certified(shifted.lambda2)) {
      method = 'lanczos-shift-invert';
      converged = true;
    }
  }
  if (!converged) {
    // Lanczos on C^T C (from the shift-invert route's vector when it ran).
    const top = yield* largestEigenvalueWork(
      op,
      {
        ...options,
        ritzVector: y,
        startVector: iterations > 0 ? y : undefined,
        convergedWhen: ritzAccurate,
      },
      context.workspace,
    );
    iterations += top.iterations;
    method = top.method;
    converged = top.converged;
    delta = top.method === 'lanczos-exhaustive' ? 0 : cosineSquaredBound(top.residualNorm, top.gap);
  }

  // q = Q_b y in w; z = L_a^{-1} A_a q, c = |z|; w = q - A_a^T L_a^{-T} z = (I - P_a) q, s = |w|.
  factors.solveLT(ib, y, ub);
  scatterTransposed(a, rowsB, ub, w);
  gatherRows(a, rowsA, w, za);
  factors.solveL(ia, za, za);
  let c2 = 0;
  for (let k = 0; k < pa; k++) c2 += za[k] * za[k];
  factors.solveLT(ia, za, za);
  for (let k = 0; k < pa; k++) za[k] = -za[k];
  scatterTransposed(a, rowsA, za, w);
  let s2 = 0;
  const stamp = context.nextStamp();
  const marks = context.columnStamp;
  for (const rows of [rowsA, rowsB]) {
    for (const r of rows) {
      for (let p = a.rowPtr[r]; p < a.rowPtr[r + 1]; p++) {
        const col = a.colIdx[p];
        if (marks[col] === stamp) continue;
        marks[col] = stamp;
        s2 += w[col] * w[col];
        w[col] = 0;
      }
    }
  }
  const c = Math.sqrt(c2);
  const s = Math.sqrt(s2);
  const theta = Math.atan2(s, c);
  // Normalized sine and cosine of theta_hat, and the bound of the module comment.
  const sHat2 = Math.sin(theta) ** 2;
  const cHat2 = Math.cos(theta) ** 2;
  const lower = Math.atan2(Math.sqrt(Math.max(0, sHat2 - delta)), Math.sqrt(Math.min(1, cHat2 + delta)));
  return {
    theta,
    cos: Math.min(c / Math.hypot(s, c), 1),
    method,
    absoluteErrorBound: theta - lower,
    iterations,
    converged,
  };
}

/**
 * The coupling route (module comment, ./couplingBlock.ts): C^T C's top eigenvector into y from the pair's coupling
 * rows (context.couplingA / couplingB, countA and countB of them), when its multiply-adds are within
 * COUPLING_ROUTE_BUDGET times the two machines' own factorizations; null otherwise, or when the coupling's Gram matrix
 * is not numerically positive definite.
 */
function* couplingRouteWork(
  context: PairAngleContext,
  factorValues: (machine: number) => GramFactorValues,
  ia: number,
  ib: number,
  countA: number,
  countB: number,
  y: Float64Array,
  convergedWhen: (value: number, residual: number, gap: number) => boolean,
): Work<CouplingTop | null> {
  const fa = factorValues(ia);
  const fb = factorValues(ib);
  const supportA = factorColumnsSupport(fa, context.couplingA, countA);
  const supportB = factorColumnsSupport(fb, context.couplingB, countB);
  const budget = COUPLING_ROUTE_BUDGET * (fa.symbolic.flops + fb.symbolic.flops);
  if (couplingRouteCost(supportA, countA, supportB, countB) > budget) return null;
  // F = E_a^T A_a A_b^T E_b by its nonzeros, column by column: each coupling row of b scattered into the column
  // accumulator, the coupling rows of a gathered from it.
  const { rowPtr, colIdx, values } = context.slots.a;
  const rowsA = context.slots.rowsOfMachine[ia];
  const rowsB = context.slots.rowsOfMachine[ib];
  const w = context.columnValues;
  const row: number[] = [];
  const col: number[] = [];
  const value: number[] = [];
  for (let t = 0; t < countB; t++) {
    const rb = rowsB[context.couplingB[t]];
    for (let p = rowPtr[rb]; p < rowPtr[rb + 1]; p++) w[colIdx[p]] = values[p];
    for (let s = 0; s < countA; s++) {
      const ra = rowsA[context.couplingA[s]];
      let acc = 0;
      for (let p = rowPtr[ra]; p < rowPtr[ra + 1]; p++) acc += values[p] * w[colIdx[p]];
      if (acc !== 0) {
        row.push(s);
        col.push(t);
        value.push(acc);
      }
    }
    for (let p = rowPtr[rb]; p < rowPtr[rb + 1]; p++) w[colIdx[p]] = 0;
  }
  const f = { ka: countA, kb: countB, row: Int32Array.from(row), col: Int32Array.from(col), value: Float64Array.from(value) };
  return yield* couplingTopWork(fa, supportA, context.couplingA, fb, supportB, context.couplingB, f, y, convergedWhen, context.workspace);
}

/** Whether machines' column supports intersect (a stamp over the columns of the smaller row set). */
function supportsOverlap(context: PairAngleContext, rowsA: Int32Array, rowsB: Int32Array): boolean {
  const { rowPtr, colIdx } = context.slots.a;
  const stamp = context.nextStamp();
  const marks = context.columnStamp;
  for (const r of rowsB) for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) marks[colIdx[p]] = stamp;
  for (const r of rowsA) for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) if (marks[colIdx[p]] === stamp) return true;
  return false;
}

export function sparsePairAngle(context: PairAngleContext, i: number, j: number, options: LargestEigenvalueOptions = {}): SparsePairAngle {
  return runSync(sparsePairAngleWork(context, i, j, options));
}
