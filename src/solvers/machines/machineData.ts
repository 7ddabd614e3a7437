/**
 * What the machines hold and the systems made of them: on dense storage (DenseMachineData: A_i, b_i on
 * the column support C_i, the orthonormal basis Q_i and the factor R with A_i^T = Q_i R, built by
 * ../distributed/distributedSystem.ts) and on CSR storage (CsrMachineData: A_i's rows and the
 * Cholesky factor of G_i = A_i A_i^T, built by ../distributed/sparseSystem.ts). Types only, here
 * below ../distributed (whose sparse build factors through ./placement.ts) so that the passes of
 * this folder, the algorithms and the analysis read them without importing the builders.
 */
import type { CsrMatrix, DenseMatrix } from '../matrix.js';
import type { Partition } from '../problem.js';
import type { CholeskyFactor } from '../sparse/sparseCholesky.js';
import type { ArenaStaging } from '../linalg/wasmRowKernels.js';
import type { HouseholderReflectors } from '../linalg/denseKernels.js';

export interface DenseMachineData {
  readonly index: number;
  /** Global row indices held by this machine, ascending (length p). */
  readonly rows: Int32Array;
  readonly p: number;
  /**
   * dim R(A_i): p, or less on a tall system whose machine holds dependent rows (then the rows of q
   * of its dependent rows are zero, ../distributed/distributedSystem.ts).
   */
  readonly rank: number;
  /** Column support C_i, ascending (length c). */
  readonly cols: Int32Array;
  readonly c: number;
  /** True when C_i is every column (then cols[k] = k and gathers can be skipped). */
  readonly full: boolean;
  /** A_i restricted to C_i: p x c, row-major. */
  readonly a: Float64Array;
  /** b_i (length p). */
  readonly b: Float64Array;
  /** Q_i^T restricted to C_i: p x c, row-major; row k is the k-th orthonormal basis vector of R(A_i). */
  readonly q: Float64Array;
  /** R (p x p, row-major, upper triangular) with A_i^T = Q_i R. */
  readonly r: Float64Array;
  /**
   * Nonzero extent of each row of `a` and of `q` within the support: entries of row k outside
   * [start[k], end[k]) are exactly zero. Basis vector k is a combination of rows 0..k of A_i only,
   * so on banded or sparse data these extents are short (sherman5: ~70% of Q_i is exact zeros, and
   * a row of A_i has ~6 nonzeros); skipping exact zeros changes no result. Dense: [0, c).
   */
  readonly aStart: Int32Array;
  readonly aEnd: Int32Array;
  readonly qStart: Int32Array;
  readonly qEnd: Int32Array;
  /**
   * Q_i^T x_i for any x_i solving A_i x = b_i, i.e. R^{-T} b_i. APC's consensus step never changes
   * Q_i^T x_i (it only moves x_i inside the null space of A_i), so this is a constant of the run.
   */
  readonly qtx0: Float64Array;
  /**
   * |b_i - A_i A_i^+ b_i|^2, what no x brings below on this machine: 0 unless its rows are dependent
   * and b_i leaves their span (then APC's |A_i xbar - b_i|^2 = |R^T w_i|^2 + this, ../machines/machine.ts).
   */
  readonly localResidual2: number;
}

/**
 * A dense machine as far as its rows and R determine it, Q_i not formed (the partition advisor's candidates, whose
 * kappa(S) reads R alone: ../analysis/kappaS.ts sOfFactorsWork): DenseMachineData's fields of the same names, but qStart
 * and qEnd bound Q_i^T's rows by the hull of A_i's rows 0..k (basis vector k combines them). The QR's reflectors are
 * kept, so that Q_i can be formed after all (../distributed/distributedSystem.ts denseSystemOfFactorsWork); null when R
 * came from elsewhere (the Cholesky factor of A_i A_i^T: buildDenseFactorsWork's triangularFactorOf).
 */
export type DenseMachineFactor = Pick<
  DenseMachineData,
  'index' | 'rows' | 'p' | 'cols' | 'c' | 'full' | 'b' | 'r' | 'aStart' | 'aEnd' | 'qStart' | 'qEnd'
> & {
  /** Its rows on its columns, or null for a machine on every column whose R came from elsewhere: A's rows `rows` serve. */
  readonly a: Float64Array | null;
  readonly reflectors: HouseholderReflectors | null;
};

/** A system on dense storage: every machine's rows, basis and factor as above. */
export interface DenseSystem {
  readonly storage: 'dense';
  readonly n: number;
  readonly m: number;
  readonly A: DenseMatrix;
  readonly b: Float64Array;
  readonly xTrue: Float64Array | null;
  readonly partition: Partition;
  readonly machines: readonly DenseMachineData[];
}

/** A square dense system's machines as DenseMachineFactor (../distributed/distributedSystem.ts buildDenseFactorsWork). */
export type DenseFactors = Omit<DenseSystem, 'machines'> & { readonly machines: readonly DenseMachineFactor[] };

export interface CsrMachineData {
  readonly index: number;
  /** Global row indices held by this machine, ascending (length p). */
  readonly rows: Int32Array;
  readonly p: number;
  /** A_i: p x n, global column indices. */
  readonly a: CsrMatrix;
  /** b_i (length p). */
  readonly b: Float64Array;
  /** Column support C_i (columns where some row of A_i has a stored entry), ascending (length c). */
  readonly cols: Int32Array;
  readonly c: number;
  /** True when C_i is every column. */
  readonly full: boolean;
  /** dim R(A_i): p, or less on a tall system whose machine holds dependent rows (then `projection` is set). */
  readonly rank: number;
  /**
   * Cholesky factor of G_i = A_i A_i^T (its work vector is for the calling thread's solves only); of
   * A_S A_S^T for the rows S of `projection` when that is set.
   */
  readonly gram: CholeskyFactor;
  /**
   * Estimate of kappa_1(D G_i D), D = diag(G_i)^{-1/2} (the diagonally scaled Gram matrix, whose
   * conditioning sets the accuracy of solves with the factor): a lower bound, usually within a
   * factor of 3.
   */
  readonly gramCondition: number;
  /** Refinement corrections per solve with G_i (0 for a well-conditioned machine). */
  readonly gramRefinement: number;
  /**
   * A machine with dependent rows: the rows the projection passes use, A_S (global columns), and b_S', whose
   * solution set {A_S x = b_S'} is the machine's local least-squares solutions (../distributed/sparseSystem.ts).
   * Either its independent rows S (`rows`, local indices) with b_S' = A_S A_i^+ b_i, or, on a machine of full rank
   * on its support (`rows` null), the unit rows e_j (j in C_i) with b' = A_i^+ b_i on C_i. Null when the rows are
   * independent.
   */
  readonly projection: { readonly rows: Int32Array | null; readonly a: CsrMatrix; readonly b: Float64Array } | null;
}

export interface CsrSystem {
  readonly storage: 'csr';
  readonly n: number;
  readonly m: number;
  readonly A: CsrMatrix;
  readonly b: Float64Array;
  readonly xTrue: Float64Array | null;
  readonly partition: Partition;
  readonly machines: readonly CsrMachineData[];
  /**
   * Where the setup put the machines' values (each machine's `a.values`) for a gradient run's WebAssembly arena, which
   * then takes them as they are (../linalg/wasmRowKernels.ts ArenaStaging); absent or null when they are elsewhere.
   */
  readonly arenaStaging?: ArenaStaging | null;
}

/** What the iterations run on: a system on dense storage, or its CSR sibling (../distributed/sparseSystem.ts). */
export type DistributedSystem = DenseSystem | CsrSystem;
