/**
 * What each machine holds: its rows A_i and b_i, and what it derives from them alone
 * (the orthonormal basis Q_i of R(A_i) and the triangular factor R with A_i^T = Q_i R).
 *
 * Every machine's data is stored on its *column support* C_i (the columns where some row of A_i is
 * nonzero): a vector v restricted to C_i is all A_i and Q_i ever see, since A_i v and Q_i^T v only
 * read v on C_i and Q_i w only writes there. For dense matrices C_i is every column; for the sparse
 * real matrices (sherman5: ~700 of 3312 columns per machine) it cuts the work of every projection
 * and of every Gram block Q_i^T Q_j several-fold, and machines with disjoint supports are exactly
 * orthogonal (theta_ij = pi/2, Proposition 1).
 */
import { runSync, type Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import { householderQrWork, solveRTransposed } from '../linalg/householderQr.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { copyRowsOnColumns, denseColumnSupport } from '../matrix.js';
import { independentRows, rowSpaceBasisWork } from './rowSpace.js';
import { isCsrProblem, sameIndices, type DenseProblem, type CsrProblem } from '../problem.js';
import type {
  DenseFactors,
  DenseMachineFactor,
  DenseSystem,
  DenseMachineData,
  DistributedSystem,
  CsrSystem,
} from '../machines/machineData.js';
import { buildSparseSystemWork } from './sparseSystem.js';

/** The types of what is built here are the machines' (../machines/machineData.ts, below this folder). */
export type { DenseFactors, DenseMachineFactor, DenseSystem, DenseMachineData, DistributedSystem } from '../machines/machineData.js';

/** Relative size of a QR pivot below which a machine's rows are treated as linearly dependent. */
const DEPENDENT_ROWS_TOLERANCE = 64 * Number.EPSILON;

/**
 * For each row of a p x c row-major matrix, [first nonzero, last nonzero + 1) (empty rows: [0, 0)); row k is x's row
 * rows[k] when `rows` is given.
 */
function rowExtents(x: Float64Array, p: number, c: number, rows?: Int32Array): [Int32Array, Int32Array] {
  const start = new Int32Array(p);
  const end = new Int32Array(p);
  for (let k = 0; k < p; k++) {
    const off = (rows === undefined ? k : rows[k]) * c;
    let lo = 0;
    while (lo < c && x[off + lo] === 0) lo++;
    let hi = c;
    while (hi > lo && x[off + hi - 1] === 0) hi--;
    start[k] = lo;
    end[k] = hi;
  }
  return [start, end];
}

/** A machine's rows A_i on their column support, and b_i (the first part of every dense machine's build). */
export interface MachineRows {
  readonly rows: Int32Array;
  readonly p: number;
  readonly cols: Int32Array;
  readonly c: number;
  readonly full: boolean;
  readonly a: Float64Array;
  readonly b: Float64Array;
}

function* machineRowsWork(problem: DenseProblem, index: number): Work<MachineRows> {
  const { A, b } = problem;
  const n = A.cols;
  const rows = problem.partition.rowsOf[index];
  const p = rows.length;
  const cols = denseColumnSupport(A, rows);
  const c = cols.length;
  // Yields between the O(p c) passes below: one machine may hold all of a 3312 x 3312 matrix.
  yield undefined;
  // A square A with dependent rows on a machine is singular (a tall one may have them: rankDeficientMachineWork).
  if (c < p && A.rows === n) {
    throw new SingularMatrixError(
      `The matrix is singular: the ${p} rows of machine ${index} are nonzero in only ${c} columns, so they are linearly dependent.`,
      { machine: index, rows: p, supportColumns: c },
    );
  }
  const full = c === n;
  const a = new Float64Array(p * c);
  const bi = new Float64Array(p);
  for (let k0 = 0; k0 < p; k0 += 256) {
    copyRowsOnColumns(A, rows, cols, a, k0, Math.min(p, k0 + 256));
    yield undefined;
  }
  for (let k = 0; k < p; k++) bi[k] = b[rows[k]];
  return { rows, p, cols, c, full, a, b: bi };
}

/**
 * A nonsingular A has A_i of full row rank (docs/SPEC.md, "Setting"); a vanishing pivot of R says otherwise. Row k of
 * A_i = R^T Q_i^T has the norm of R's column k (Q_i orthonormal): p^2 / 2 reads where A_i's rows take p c.
 */
function checkIndependentRows(r: Float64Array, rows: Int32Array, index: number): void {
  const p = rows.length;
  const rowNorm2 = new Float64Array(p);
  for (let t = 0; t < p; t++) for (let k = t; k < p; k++) rowNorm2[k] += r[t * p + k] * r[t * p + k];
  let maxRowNorm = 0;
  for (let k = 0; k < p; k++) maxRowNorm = Math.max(maxRowNorm, Math.sqrt(rowNorm2[k]));
  for (let k = 0; k < p; k++) {
    if (!(Math.abs(r[k * p + k]) > DEPENDENT_ROWS_TOLERANCE * maxRowNorm)) {
      throw new SingularMatrixError(
        `The matrix is singular: row ${rows[k]} of A (row ${k} of machine ${index}'s ${p}) is a linear combination of the machine's other rows.`,
        { machine: index, row: rows[k], machineRow: k },
      );
    }
  }
}

function* buildMachineWork(kernels: Kernels, problem: DenseProblem, index: number): Work<DenseMachineData> {
  // A tall A (N > n) may have full column rank with dependent rows on a machine: its projection then
  // goes through a basis of the machine's row space (rankDeficientMachineWork).
  const tall = problem.A.rows > problem.A.cols;
  const { rows, p, cols, c, full, a, b: bi } = yield* machineRowsWork(problem, index);
  if (tall) {
    const independent = independentRows(kernels, a, p, c);
    if (independent.length < p) return yield* rankDeficientMachineWork(kernels, index, rows, cols, full, a, bi, independent);
  }
  return yield* denseMachineOfRowsWork(kernels, { index, rows, p, cols, c, full, a, b: bi });
}

/**
 * A machine of independent rows from its rows on their column support (`a`: p x c, row-major; `cols` those columns,
 * ascending): the Householder QR A_i^T = Q_i R, as a dense system's build makes each machine of a square A. Also for a
 * caller with CSR rows of its own (../analysis/csrPairAngle.ts: a small pair's angle through dense bases).
 * SingularMatrixError when a pivot of R says the rows are dependent.
 */
export function* denseMachineOfRowsWork(kernels: Kernels, rowsOnSupport: MachineRows & { index: number }): Work<DenseMachineData> {
  const { index, rows, p, cols, c, full, a, b } = rowsOnSupport;
  const { q, r } = yield* householderQrWork(kernels, a, p, c);
  yield undefined;
  checkIndependentRows(r, rows, index);
  const qtx0 = solveRTransposed(r, p, b);
  const [aStart, aEnd] = rowExtents(a, p, c);
  const [qStart, qEnd] = rowExtents(q, p, c);
  return { index, rows, p, rank: p, cols, c, full, a, b, q, r, aStart, aEnd, qStart, qEnd, qtx0, localResidual2: 0 };
}

export interface DenseFactorsOptions {
  /**
   * A machine's R from elsewhere, R^T R = A_i A_i^T (the Cholesky factor of its rows' Gram matrix, when the caller has
   * that matrix: p^3 / 3 multiply-adds where the QR costs ~2 p^2 c), or null for its QR. Such a machine keeps no
   * reflectors: denseSystemOfFactorsWork factors it then.
   */
  triangularFactorOf?: (rows: Int32Array) => Float64Array | null;
  /**
   * Machines of other partitions of the same A and b: a machine whose rows are one of theirs is taken from it, not
   * factored again (its factor depends on its rows alone), as buildDenseSystemReusingWork takes a system's.
   */
  known?: readonly DenseMachineFactor[];
}

/**
 * A square dense problem's machines with R alone (DenseFactors): the Householder QR without forming Q, about half its
 * work, R bit for bit buildDistributedSystemWork's (or the caller's, DenseFactorsOptions). For the partition advisor's
 * candidates (../analysis/kappaS.ts sOfFactorsWork); SingularMatrixError as that build throws it.
 */
export function* buildDenseFactorsWork(
  problem: DenseProblem,
  kernels: Kernels = selectedKernels(),
  options: DenseFactorsOptions = {},
): Work<DenseFactors> {
  const { A } = problem;
  if (A.rows !== A.cols) throw new RangeError(`buildDenseFactorsWork needs a square A, got ${A.rows} x ${A.cols}`);
  const { m } = problem.partition;
  const machines: DenseMachineFactor[] = [];
  for (let index = 0; index < m; index++) {
    const rows = problem.partition.rowsOf[index];
    const same = options.known?.find((machine) => sameIndices(machine.rows, rows));
    if (same !== undefined) {
      machines.push({ ...same, index });
      yield { phase: 'factors', fraction: (index + 1) / m };
      continue;
    }
    const given = options.triangularFactorOf?.(rows) ?? null;
    // A machine on every column whose R is given keeps no copy of its rows (A's rows serve: ../analysis/kappaS.ts
    // factorsSOperator); the others are copied on their support, as the build does.
    const support = given === null ? null : denseColumnSupport(A, rows);
    const { p, cols, c, full, a, b } =
      support !== null && support.length === A.cols ? everyColumnRows(problem, rows, support) : yield* machineRowsWork(problem, index);
    const { r, reflectors } =
      given === null ? yield* kernels.dense.householderFactorWork(new Float64Array(a!), p, c) : { r: given, reflectors: null };
    yield undefined;
    checkIndependentRows(r, rows, index);
    const [aStart, aEnd] = a === null ? rowExtents(A.data, p, c, rows) : rowExtents(a, p, c);
    const qStart = new Int32Array(p);
    const qEnd = new Int32Array(p);
    for (let k = 0, lo = c, hi = 0; k < p; k++) {
      if (aEnd[k] > aStart[k]) {
        lo = Math.min(lo, aStart[k]);
        hi = Math.max(hi, aEnd[k]);
      }
      qStart[k] = hi > lo ? lo : 0;
      qEnd[k] = hi > lo ? hi : 0;
    }
    machines.push({ index, rows, p, cols, c, full, a, b, r, aStart, aEnd, qStart, qEnd, reflectors });
    yield { phase: 'factors', fraction: (index + 1) / m };
  }
  return { storage: 'dense', n: problem.n, m, A, b: problem.b, xTrue: problem.xTrue, partition: problem.partition, machines };
}

/**
 * The dense system of `factors`' partition, each machine made by denseMachineOfFactorWork: bit for bit what
 * buildDistributedSystemWork builds.
 */
export function* denseSystemOfFactorsWork(factors: DenseFactors, kernels: Kernels = selectedKernels()): Work<DenseSystem> {
  const machines: DenseMachineData[] = [];
  for (const factor of factors.machines) {
    machines.push(yield* denseMachineOfFactorWork(factors, factor.index, kernels));
    yield { phase: 'bases', fraction: (factor.index + 1) / factors.m };
  }
  const { n, m, A, b, xTrue, partition } = factors;
  return { storage: 'dense', n, m, A, b, xTrue, partition, machines };
}

/**
 * Machine `index` of a DenseFactors as buildDistributedSystemWork builds it: Q formed from its kept reflectors (its R the
 * factor's), or by its QR when it kept none (its rows copied then, as the build copies them, when it held none).
 */
export function* denseMachineOfFactorWork(
  factors: DenseFactors,
  index: number,
  kernels: Kernels = selectedKernels(),
): Work<DenseMachineData> {
  const { reflectors, ...rest } = factors.machines[index];
  const { p, c, b } = rest;
  const a = rest.a ?? (yield* machineRowsWork(factors, index)).a;
  const { q, r } =
    reflectors === null ? yield* householderQrWork(kernels, a, p, c) : { q: yield* kernels.dense.formQWork(reflectors), r: rest.r };
  const [qStart, qEnd] = rowExtents(q, p, c);
  return { ...rest, a, r, rank: p, q, qStart, qEnd, qtx0: solveRTransposed(r, p, b), localResidual2: 0 };
}

/**
 * A machine on every column (`cols`: its column support, every column) as DenseFactorsOptions' given R lets
 * buildDenseFactorsWork hold it: its rows not copied.
 */
function everyColumnRows(problem: DenseProblem, rows: Int32Array, cols: Int32Array): Omit<MachineRows, 'a'> & { a: null } {
  return {
    rows,
    p: rows.length,
    cols,
    c: cols.length,
    full: true,
    a: null,
    b: Float64Array.from(rows, (k) => problem.b[k]),
  };
}

/**
 * A machine whose p rows span a space of dimension r < p: Q_i is an orthonormal basis of R(A_i)
 * (the Householder QR of its independent rows), stored as p rows of which the rows of the dependent
 * rows of A_i are zero, so every pass and every Gram block Q_i^T Q_j reads it unchanged. Its solution
 * set is that of the local least-squares problem, {x : A_i^T A_i x = A_i^T b_i} (the set
 * {A_i x = b_i} when that is consistent): qtx0 = Q_i^T A_i^+ b_i, A_i^+ the pseudo-inverse, from the
 * QR of R_i^T (p x r, full column rank) where A_i^T = Q_i R_i (./rowSpace.ts). The projection onto it is
 * x - A_i^+ (A_i x - b_i) = x - Q_i (Q_i^T x - qtx0). R is R_i padded with unit diagonal entries on the
 * dependent rows (whose q rows are zero, so what a solve puts there is never used).
 */
function* rankDeficientMachineWork(
  kernels: Kernels,
  index: number,
  rows: Int32Array,
  cols: Int32Array,
  full: boolean,
  a: Float64Array,
  bi: Float64Array,
  independent: Int32Array,
): Work<DenseMachineData> {
  const p = rows.length;
  const c = cols.length;
  const rank = independent.length;
  const basis = yield* rowSpaceBasisWork(kernels, a, p, c, independent, bi);
  const q = new Float64Array(p * c);
  for (let t = 0; t < rank; t++) q.set(basis.q.subarray(t * c, (t + 1) * c), independent[t] * c);
  const r = new Float64Array(p * p);
  const isIndependent = new Uint8Array(p);
  for (let t = 0; t < rank; t++) {
    isIndependent[independent[t]] = 1;
    r.set(basis.reduced.subarray(t * p, (t + 1) * p), independent[t] * p);
  }
  for (let k = 0; k < p; k++) if (!isIndependent[k]) r[k * p + k] = 1;
  const y = basis.qtx0;
  const qtx0 = new Float64Array(p);
  for (let t = 0; t < rank; t++) qtx0[independent[t]] = y[t];
  // b_i - A_i A_i^+ b_i = b_i - R_i^T y.
  let localResidual2 = 0;
  for (let j = 0; j < p; j++) {
    let s = bi[j];
    for (let t = 0; t < rank; t++) s -= basis.reduced[t * p + j] * y[t];
    localResidual2 += s * s;
  }
  const [aStart, aEnd] = rowExtents(a, p, c);
  const [qStart, qEnd] = rowExtents(q, p, c);
  return { index, rows, p, rank, cols, c, full, a, b: bi, q, r, aStart, aEnd, qStart, qEnd, qtx0, localResidual2 };
}

/**
 * The dense system of `problem`; a machine whose rows are those of one of `known` (machines of another partition of the
 * same A and b) is taken from it, not factored again: its data depends on its rows alone.
 */
function* buildDenseSystemWork(kernels: Kernels, problem: DenseProblem, known: readonly DenseMachineData[] = []): Work<DenseSystem> {
  const { m } = problem.partition;
  const machines: DenseMachineData[] = [];
  for (let i = 0; i < m; i++) {
    const rows = problem.partition.rowsOf[i];
    const same = known.find((machine) => sameIndices(machine.rows, rows));
    machines.push(same === undefined ? yield* buildMachineWork(kernels, problem, i) : { ...same, index: i });
    yield { phase: 'bases', fraction: (i + 1) / m };
  }
  return { storage: 'dense', n: problem.n, m, A: problem.A, b: problem.b, xTrue: problem.xTrue, partition: problem.partition, machines };
}

/**
 * The dense system of `problem`, its machines whose rows are those of a machine of `known` (systems of other partitions
 * of the same A and b) taken from there (the partition advisor's refinement moves a few rows at a time: most machines
 * keep theirs).
 */
export function buildDenseSystemReusingWork(
  problem: DenseProblem,
  known: readonly DenseSystem[],
  kernels: Kernels = selectedKernels(),
): Work<DenseSystem> {
  const same = known.filter((system) => system.A === problem.A && system.b === problem.b);
  return buildDenseSystemWork(
    kernels,
    problem,
    same.flatMap((system) => system.machines),
  );
}

/**
 * Each machine's data: dense (rows, Q_i, R) for a DenseProblem, CSR rows for a CsrProblem; the QR
 * factorizations on `kernels` (default: the selected backend's, ../linalg/kernels.ts).
 */
export function buildDistributedSystemWork(problem: DenseProblem, kernels?: Kernels): Work<DenseSystem>;
export function buildDistributedSystemWork(problem: CsrProblem, kernels?: Kernels): Work<CsrSystem>;
export function buildDistributedSystemWork(problem: DenseProblem | CsrProblem, kernels?: Kernels): Work<DistributedSystem>;
export function buildDistributedSystemWork(
  problem: DenseProblem | CsrProblem,
  kernels: Kernels = selectedKernels(),
): Work<DistributedSystem> {
  return isCsrProblem(problem) ? buildSparseSystemWork(problem, kernels) : buildDenseSystemWork(kernels, problem);
}

export function buildDistributedSystem(problem: DenseProblem, kernels?: Kernels): DenseSystem;
export function buildDistributedSystem(problem: CsrProblem, kernels?: Kernels): CsrSystem;
export function buildDistributedSystem(problem: DenseProblem | CsrProblem, kernels?: Kernels): DistributedSystem;
export function buildDistributedSystem(problem: DenseProblem | CsrProblem, kernels: Kernels = selectedKernels()): DistributedSystem {
  return runSync(buildDistributedSystemWork(problem, kernels));
}

/**
 * A machine as the analysis reads it: an orthonormal basis of its row space, p = rank rows, without
 * the zero rows a rank-deficient machine's Q_i^T carries for its dependent rows (the principal
 * angles' sine route and the Gram operator's size need a basis, not a spanning set). A full-rank
 * machine is itself.
 */
export function rowSpaceMachine(machine: DenseMachineData): DenseMachineData {
  const { p, rank, c } = machine;
  if (rank === p) return machine;
  const kept = new Int32Array(rank);
  for (let k = 0, t = 0; k < p; k++) if (machine.qEnd[k] > machine.qStart[k]) kept[t++] = k;
  const pick = (x: Float64Array, width: number): Float64Array => {
    const out = new Float64Array(rank * width);
    for (let t = 0; t < rank; t++) out.set(x.subarray(kept[t] * width, (kept[t] + 1) * width), t * width);
    return out;
  };
  const r = new Float64Array(rank * rank);
  for (let t = 0; t < rank; t++) for (let u = 0; u < rank; u++) r[t * rank + u] = machine.r[kept[t] * p + kept[u]];
  const pickInt = (x: Int32Array): Int32Array => Int32Array.from(kept, (k) => x[k]);
  return {
    ...machine,
    rows: pickInt(machine.rows),
    p: rank,
    a: pick(machine.a, c),
    b: pick(machine.b, 1),
    q: pick(machine.q, c),
    r,
    aStart: pickInt(machine.aStart),
    aEnd: pickInt(machine.aEnd),
    qStart: pickInt(machine.qStart),
    qEnd: pickInt(machine.qEnd),
    qtx0: pick(machine.qtx0, 1),
  };
}

/** The system with each machine's basis of its row space (rowSpaceMachine): what the analysis reads. */
export function rowSpaceSystem(system: DenseSystem): DenseSystem {
  return system.machines.every((machine) => machine.rank === machine.p)
    ? system
    : { ...system, machines: system.machines.map(rowSpaceMachine) };
}
