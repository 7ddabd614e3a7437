/**
 * What each machine holds when A is sparse (a CsrProblem): its rows A_i in compressed sparse
 * rows and b_i, with its column support C_i, and the sparse Cholesky factor L_i L_i^T = P_i G_i P_i^T
 * of its Gram matrix G_i = A_i A_i^T (fill-reducing ordering P_i), factored once per system:
 * the projection methods apply A_i^+ r = A_i^T G_i^{-1} r and P_i v = v - A_i^+ A_i v with it
 * (../machines/csrMachine.ts), where the dense path uses Q_i and R. Built in
 * O(nnz(A) + fill + m n) time and O(nnz(A) + fill + n) memory: nothing n x n and nothing p_i x c_i
 * is ever stored densely.
 *
 * Forming G_i squares A_i's condition number: a solve with the factor has a relative error of about
 * u kappa(D G_i D) (u the unit roundoff, D = diag(G_i)^{-1/2}: Cholesky's backward error is
 * relative to the diagonal, so only the scaled matrix's conditioning counts), which is
 * ~u kappa(A_i)^2 for rows of similar norms, 1e-8 already for kappa(A_i) = 1e4. Each machine
 * therefore gets a number of refinement corrections (`gramRefinement`, each multiplying that error
 * by ~u kappa(D G_i D), see ../machines/csrMachine.ts) from an estimate of kappa_1(D G_i D) (Hager's
 * 1-norm estimator, a few solves with the factor), enough for PROJECTION_ACCURACY:
 * well-conditioned machines get none and pay nothing.
 *
 * The machines are independent: a large setup builds them on threads (../parallel/taskPool.ts, the
 * same data as on one thread; threadsForSetupTasks decides when), each thread on the run's backend.
 *
 * A machine whose rows are numerically dependent (a Cholesky pivot that is not positive relative to
 * its diagonal, i.e. a row within ~1e-7 rad of the span of the others) makes a square system singular, as
 * a vanishing QR pivot does on the dense path: SingularMatrixError naming the machine and the row. On a
 * tall system the machine keeps rows spanning its row space instead: from its columns when it has more rows than
 * columns (supportRankMachine), else, or where that declines, a basis of its own rows (rankDeficientSparseMachine).
 */
import { runSync, type Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import type { CsrProblem } from '../problem.js';
import { columnSupport, nnzOf, selectRows, type ArrayPlace, type CsrMatrix } from '../sparse/csr.js';
import { gramMatrix } from '../sparse/gram.js';
import {
  currentThreadGramSolver,
  gramFactorizer,
  gramFactorOrNull,
  machineValueStaging,
  type GramAnalysisReuse,
  type GramFactorizer,
} from '../machines/placement.js';
import { onKernels, runTasksWork, type TaskRunner } from '../parallel/taskPool.js';
import { threadsForSetupTasks } from '../parallel/threads.js';
import type { CholeskyFactor } from '../sparse/sparseCholesky.js';
import { gramRowBasis } from '../sparse/droppingCholesky.js';
import { RANK_TOLERANCE } from './rowSpace.js';
import { supportRowSpace } from './supportRowSpace.js';
import { streamedRowBasisWork } from './streamedRowBasis.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { ArenaStaging } from '../linalg/wasmRowKernels.js';
import type { CsrMachineData, CsrSystem } from '../machines/machineData.js';

/** The types of what is built here are the machines' (../machines/machineData.ts, below this folder). */
export type { CsrMachineData, CsrSystem } from '../machines/machineData.js';

/** Relative accuracy a machine's solves with G_i are refined to (100 iterations then stay within 1e-10 of the dense path's). */
const PROJECTION_ACCURACY = 1e-12;
/** Most refinement corrections per solve (u kappa(G_i) is below ~1 whenever the factorization succeeds). */
const MAX_REFINEMENT = 4;
const UNIT_ROUNDOFF = Number.EPSILON / 2;

/** What building a machine reads (a worker thread gets one shared copy of it). */
interface SparseSetupSpec {
  readonly n: number;
  readonly A: CsrMatrix;
  readonly b: Float64Array;
  readonly rowsOf: readonly Int32Array[];
  /**
   * The machines' rows in shared memory: set when the setup runs on threads (a worker's machine is posted from
   * shared memory) and a large system's runs then read them on threads too (nothing copied at a run's start).
   */
  readonly shared: boolean;
  /**
   * Where each machine's values go when the system stages them for a gradient run's arena
   * (../machines/placement.ts machineValueStaging): the staging memory and machine i's region's byte offset in it.
   */
  readonly staged: { readonly memory: WebAssembly.Memory; readonly offsets: Float64Array } | null;
}

/** Each setup's (its spec's) last Gram analysis on this thread: contiguous machines of a grid often share G_i's pattern. */
const gramAnalyses = new WeakMap<SparseSetupSpec, GramAnalysisReuse>();

function gramAnalysisReuse(spec: SparseSetupSpec): GramAnalysisReuse {
  let reuse = gramAnalyses.get(spec);
  if (reuse === undefined) gramAnalyses.set(spec, (reuse = { last: null }));
  return reuse;
}

/** Where machine `index`'s values go: its region of the staging memory (reserved by the calling thread), else as its other arrays. */
function stagedValues(spec: SparseSetupSpec, index: number): ArrayPlace {
  const staged = spec.staged ?? null;
  if (staged === null) return spec.shared;
  const byteOffset = staged.offsets[index];
  return { allocate: (Construct, _bytesPerElement, length) => new Construct(staged.memory.buffer, byteOffset, length) };
}

function sparseMachine(kernels: Kernels, spec: SparseSetupSpec, index: number): CsrMachineData {
  const { A, b } = spec;
  const rows = spec.rowsOf[index];
  const p = rows.length;
  const a = selectRows(A, rows, spec.shared, stagedValues(spec, index));
  const cols = columnSupport(a);
  const c = cols.length;
  // A tall A of full column rank may hold dependent rows on a machine (rankDeficientSparseMachine); a square one is then singular.
  const tall = A.rows > spec.n;
  const bi = new Float64Array(p);
  for (let k = 0; k < p; k++) bi[k] = b[rows[k]];
  const held: MachineRows = { n: spec.n, index, rows, a, b: bi, cols };
  if (tall && c < p) return supportRankMachine(held) ?? rankDeficientSparseMachine(kernels, held, null);
  if (c < p) {
    throw new SingularMatrixError(
      `The matrix is singular: the ${p} rows of machine ${index} are nonzero in only ${c} columns, so they are linearly dependent.`,
      { machine: index, rows: p, supportColumns: c },
    );
  }
  const g = gramMatrix(a);
  let factor: CholeskyFactor;
  try {
    // The backend's factorization (CHOLMOD on the native backend), chosen by the placement.
    factor = factorGram(g, index, rows, gramFactorizer(gramAnalysisReuse(spec)));
  } catch (error) {
    if (!tall || !(error instanceof SingularMatrixError)) throw error;
    return rankDeficientSparseMachine(kernels, held, g);
  }
  return machineOf(held, g, factor, p, null);
}

/** What every CSR machine record carries of its problem: A's columns n, its index, rows, A_i, b_i and support. */
interface MachineRows {
  readonly n: number;
  readonly index: number;
  readonly rows: Int32Array;
  readonly a: CsrMatrix;
  readonly b: Float64Array;
  readonly cols: Int32Array;
}

/**
 * The machine with the Cholesky factor of `g`, the Gram matrix of the rows its projection passes use (A_i's, or
 * `projection`'s), and its condition estimate (`condition` when the caller checked it already).
 */
function machineOf(
  { n, index, rows, a, b, cols }: MachineRows,
  g: CsrMatrix,
  factor: CholeskyFactor,
  rank: number,
  projection: CsrMachineData['projection'],
  condition?: number,
): CsrMachineData {
  const { symbolic, values, work } = factor;
  // Without the analysis a refactorization would read: machines never refactor, and threads would copy it.
  const gram: CholeskyFactor = { symbolic, values, work };
  const gramCondition = condition ?? scaledConditionEstimate(g, gram);
  const c = cols.length;
  return {
    index,
    rows,
    p: rows.length,
    rank,
    a,
    b,
    cols,
    c,
    full: c === n,
    gram,
    gramCondition,
    gramRefinement: refinementSteps(gramCondition),
    projection,
  };
}

/** Whether a tall machine takes supportRankMachine first (tests of the rank-revealing routes on the rows turn it off). */
let supportRoute = true;

/** Turns supportRankMachine on or off (for tests and measurements of the routes on the rows); returns the previous setting. */
export function setSupportRowSpaceRoute(enabled: boolean): boolean {
  const previous = supportRoute;
  supportRoute = enabled;
  return previous;
}

/**
 * A tall machine (more rows than support columns), its row space found from its columns (./supportRowSpace.ts): the
 * rows R spanning R(A_i) (the unit rows of C_i when its columns are independent, each carrying the coefficients of the
 * columns that depend on it otherwise) with b' = x_K. Null when the normal equations cannot tell its rank, and the
 * routes on the rows decide (rankDeficientSparseMachine). Where it applies it replaces SuiteSparseQR of the p x c A_i^T
 * (native; Heath's rank detection kept 2,083 rows of rank 2,081 on a banded regression's machine, and the job failed)
 * and, on TypeScript, the streamed route's O(c^3) Gram-Schmidt or, above its size, the pivot-dropping Cholesky of
 * A_i A_i^T (whose greedily kept rows failed 16,000 x 3,000 regressions).
 */
function supportRankMachine(held: MachineRows): CsrMachineData | null {
  if (!supportRoute) return null;
  const { n, a, b: bi, cols } = held;
  const space = supportRowSpace(onSupport(a, cols), bi, scaledConditionEstimate);
  if (space === null) return null;
  // R on A's columns.
  const r: CsrMatrix = { ...space.rows, cols: n, colIdx: Int32Array.from(space.rows.colIdx, (t) => cols[t]) };
  const g = gramMatrix(r);
  const factor = gramFactorOrNull(g);
  if (factor === null) return null;
  return machineOf(held, g, factor, space.rank, { rows: null, a: r, b: space.rhs });
}

/**
 * A machine of a tall system whose rows are dependent (its Cholesky factorization of A_i A_i^T met a
 * vanishing pivot, or it has more rows than support columns and supportRankMachine declined). The independent rows S and the right-hand
 * side b_S' = A_S A_i^+ b_i come from a rank-revealing factorization (rowSpaceRoute): SuiteSparseQR of A_i^T on
 * the native backend (kernels.spqr, native/src/spqr_native.c: a row is dependent when what is left of it after the
 * rows pivoted before it is at most RANK_TOLERANCE of its norm, the dense path's test); on the TypeScript one the
 * dense path's test streamed over the rows (./streamedRowBasis.ts) up to STREAMED_BASIS_MAX_ENTRIES, above it the
 * pivot-dropping Cholesky of A_i A_i^T (../sparse/droppingCholesky.ts, coarser: ~1e-7 rad); nothing p x c is dense.
 * The projection passes use the rows A_S with b_S': {x : A_S x = b_S'} is the set of
 * the machine's local least-squares solutions ({A_i x = b_i} when that is consistent), and
 * A_S^+ (A_S x - b_S') = A_i^+ (A_i x - b_i), the same projection as the dense path's. The gradient
 * passes keep every row.
 */
function rankDeficientSparseMachine(kernels: Kernels, held: MachineRows, gramOfRows: CsrMatrix | null): CsrMachineData {
  const { index, rows, a, b: bi, cols } = held;
  const p = rows.length;
  const c = cols.length;
  let { rows: independent, rhs: bS } = independentRowsOf(kernels, index, a, bi, cols, gramOfRows);
  let aS = selectRows(a, independent);
  let g = gramMatrix(aS);
  // The Cholesky factor of the kept rows' Gram matrix (g, of the rows `independent` as they stand when called).
  const factorKept = (): CholeskyFactor =>
    factorGram(
      g,
      index,
      Int32Array.from(independent, (k) => rows[k]),
      gramFactorizer(),
    );
  const route = rowSpaceRoute(kernels, p, c);
  let factor: CholeskyFactor | null = null;
  try {
    factor = factorKept();
  } catch (error) {
    if (!(error instanceof SingularMatrixError) || route === 'dropping-cholesky') throw error;
  }
  // SuiteSparseQR's rank detection (Heath's) is a heuristic: it can keep a row in the others' span and call an
  // independent one dead, so that the kept rows miss a direction of R(A_i) (a 325 x 60 machine with scaled copies of
  // rows, kappa(A) = 1.6: its 60 kept rows spanned 59 dimensions). Where the Cholesky factorization of their Gram matrix
  // refuses them, or takes them with a condition number its refined solves cannot meet PROJECTION_ACCURACY under (a
  // 502 x 100 machine: ~1.6e18, its x_W off by 7e-4), the streamed route (the dense path's Gram-Schmidt, on what is left
  // of each row) chooses again.
  const reChoose = route === 'suitesparseqr' && streamedRouteFits(p, c);
  // The estimate of the factor it checked, kept for the machine when that factor stands.
  let checkedCondition: number | null = null;
  if (factor !== null && reChoose) {
    checkedCondition = scaledConditionEstimate(g, factor);
    if (!refinable(checkedCondition)) [factor, checkedCondition] = [null, null];
  }
  if (factor === null && reChoose) {
    ({ rows: independent, rhs: bS } = runSync(streamedRowBasisWork(kernels, onSupport(a, cols), bi)));
    aS = selectRows(a, independent);
    g = gramMatrix(aS);
    try {
      factor = factorKept();
    } catch (error) {
      if (!(error instanceof SingularMatrixError)) throw error;
    }
  }
  if (factor === null) {
    // SuiteSparseQR and the streamed route keep a row down to RANK_TOLERANCE (1e-10 rad) from the span of the others;
    // the Cholesky factor of their Gram matrix, which squares that angle, cannot take one within ~1e-7 rad. Such rows are
    // dropped as the pivot-dropping Cholesky drops them (../sparse/droppingCholesky.ts), from the rows kept: with
    // b_S' = A_S A_i^+ b_i, A_S'' A_S^+ b_S' = A_S'' A_i^+ b_i, so the rows left keep the machine's local least-squares
    // solutions.
    const kept = gramRowBasis(g, bS);
    independent = Int32Array.from(kept.rows, (k) => independent[k]);
    bS = kept.rhs;
    aS = selectRows(a, independent);
    g = gramMatrix(aS);
    factor = factorKept();
  }
  const projection = { rows: independent, a: aS, b: bS };
  return machineOf(held, g, factor, independent.length, projection, checkedCondition ?? undefined);
}

/**
 * The independent rows of machine `index` (local indices, ascending) and their right-hand side b_S', by the kernels'
 * factorization (A_i A_i^T: `gramOfRows` when the caller has it).
 */
function independentRowsOf(
  kernels: Kernels,
  index: number,
  a: CsrMatrix,
  bi: Float64Array,
  cols: Int32Array,
  gramOfRows: CsrMatrix | null,
): { rows: Int32Array; rhs: Float64Array } {
  if (rowSpaceRoute(kernels, a.rows, cols.length) === 'streamed') return runSync(streamedRowBasisWork(kernels, onSupport(a, cols), bi));
  if (kernels.spqr === null) {
    try {
      return gramRowBasis(gramOfRows ?? gramMatrix(a), bi);
    } catch (error) {
      if (!(error instanceof SingularMatrixError)) throw error;
      throw new SingularMatrixError(`Machine ${index}'s rows are linearly dependent, and: ${error.message}`, {
        ...error.details,
        machine: index,
      });
    }
  }
  // SuiteSparseQR factors the c x p A_i^T.
  const support = onSupport(a, cols);
  const basis = kernels.spqr.spqrRowBasis(a.rows, cols.length, a.rowPtr, support.colIdx, a.values, bi, RANK_TOLERANCE);
  const order = Array.from(basis.rows.keys()).sort((u, v) => basis.rows[u] - basis.rows[v]);
  return { rows: Int32Array.from(order, (t) => basis.rows[t]), rhs: Float64Array.from(order, (t) => basis.rhs[t]) };
}

/**
 * Most entries of the basis a CSR machine's streamed row space holds (rank x c <= min(p, c) x c; 32 MiB) on the TypeScript
 * backend: ./streamedRowBasis.ts up to it, the pivot-dropping Cholesky above. The Cholesky keeps rows greedily, and on
 * machines of many random sparse rows (2,000 or 10,000 rows on 500 columns) the kept rows grew so ill-conditioned that
 * rounding kept a dependent row or stalled the conjugate gradients of b_S' (the job failed with singular-matrix).
 */
const STREAMED_BASIS_MAX_ENTRIES = 2 ** 22;

/**
 * How a CSR machine with dependent rows finds them: SuiteSparseQR on the native backend; on the TypeScript one the dense
 * path's rank-revealing Gram-Schmidt and Householder QR streamed over its rows (./streamedRowBasis.ts) up to
 * STREAMED_BASIS_MAX_ENTRIES, the pivot-dropping Cholesky above. The first two drop rows within RANK_TOLERANCE (1e-10 rad)
 * of the others' span, the last within ~1e-7 rad (../sparse/droppingCholesky.ts).
 */
function rowSpaceRoute(kernels: Kernels, p: number, c: number): 'suitesparseqr' | 'streamed' | 'dropping-cholesky' {
  if (kernels.spqr !== null) return 'suitesparseqr';
  return streamedRouteFits(p, c) ? 'streamed' : 'dropping-cholesky';
}

/** Whether a p x c machine's streamed row basis holds at most STREAMED_BASIS_MAX_ENTRIES entries. */
function streamedRouteFits(p: number, c: number): boolean {
  return Math.min(p, c) * c <= STREAMED_BASIS_MAX_ENTRIES;
}

/** A machine's rows on its support: column indices local to cols (the same row pointers and values). */
export function onSupport(a: CsrMatrix, cols: Int32Array): CsrMatrix {
  const local = new Int32Array(a.cols);
  for (let t = 0; t < cols.length; t++) local[cols[t]] = t;
  const colIdx = Int32Array.from(a.colIdx.subarray(0, a.rowPtr[a.rows]), (j) => local[j]);
  return { rows: a.rows, cols: cols.length, rowPtr: a.rowPtr, colIdx, values: a.values };
}

/** Machine `index` of a setup on a worker thread (../parallel/taskWorker.ts): what sparseMachine builds on the calling thread. */
// A task thread's entry: its kernels are those of the backend the task pool selected in it.
export const runTask: TaskRunner = (spec, index) => sparseMachine(selectedKernels(), spec as SparseSetupSpec, index);

/** Whether MAX_REFINEMENT corrections bring the solves with a Gram factor of this condition number to PROJECTION_ACCURACY. */
function refinable(condition: number): boolean {
  const contraction = condition * UNIT_ROUNDOFF;
  return contraction < 1 && contraction ** (MAX_REFINEMENT + 1) <= PROJECTION_ACCURACY;
}

/** Corrections until (u kappa)^(steps + 1) <= PROJECTION_ACCURACY. */
function refinementSteps(condition: number): number {
  const contraction = condition * UNIT_ROUNDOFF;
  let error = contraction;
  let steps = 0;
  while (error > PROJECTION_ACCURACY && steps < MAX_REFINEMENT) {
    error *= contraction;
    steps++;
  }
  return steps;
}

/**
 * kappa_1(D G D), D = diag(G)^{-1/2}: |D G D|_1 (largest row sum, D G D being symmetric) times
 * Hager's estimate of |(D G D)^{-1}|_1 = |D^{-1} G^{-1} D^{-1}|_1 from G's factor (Higham,
 * "Accuracy and Stability of Numerical Algorithms", 2nd ed., algorithm 15.1): at most five pairs of
 * solves, a lower bound that is rarely off by more than a factor of 3.
 */
function scaledConditionEstimate(g: CsrMatrix, factor: CholeskyFactor): number {
  // The addon's solves on the native backend: these few solves per machine were a third of the setup in TypeScript.
  const solver = currentThreadGramSolver(factor);
  const p = g.rows;
  const { rowPtr, colIdx, values } = g;
  // sqrt(G_kk) = |a_k| > 0 (no zero row reaches here: the matrix has none).
  const root = new Float64Array(p);
  for (let k = 0; k < p; k++) for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) if (colIdx[e] === k) root[k] = Math.sqrt(values[e]);
  let norm = 0;
  for (let k = 0; k < p; k++) {
    let s = 0;
    for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) s += Math.abs(values[e]) / (root[k] * root[colIdx[e]]);
    norm = Math.max(norm, s);
  }
  // (D G D)^{-1} v = D^{-1} G^{-1} (D^{-1} v), in place.
  const applyInverse = (v: Float64Array): void => {
    for (let k = 0; k < p; k++) v[k] *= root[k];
    solver.solve(v, v);
    for (let k = 0; k < p; k++) v[k] *= root[k];
  };
  const x = new Float64Array(p).fill(1 / p);
  const y = new Float64Array(p);
  const z = new Float64Array(p);
  let estimate = 0;
  for (let iteration = 0; iteration < 5; iteration++) {
    y.set(x);
    applyInverse(y);
    estimate = 0;
    for (let k = 0; k < p; k++) {
      estimate += Math.abs(y[k]);
      z[k] = y[k] >= 0 ? 1 : -1;
    }
    // The inverse is symmetric: z = (D G D)^{-1} sign(y), the subgradient of |(D G D)^{-1} x|_1.
    applyInverse(z);
    let j = 0;
    let zx = 0;
    for (let k = 0; k < p; k++) {
      if (Math.abs(z[k]) > Math.abs(z[j])) j = k;
      zx += z[k] * x[k];
    }
    if (Math.abs(z[j]) <= zx) break;
    x.fill(0);
    x[j] = 1;
  }
  return norm * estimate;
}

function factorGram(g: CsrMatrix, index: number, rows: Int32Array, factorize: GramFactorizer): CholeskyFactor {
  try {
    return factorize(g);
  } catch (error) {
    if (!(error instanceof SingularMatrixError)) throw error;
    const local = error.details.row;
    const row = typeof local === 'number' ? rows[local] : undefined;
    throw new SingularMatrixError(
      `The matrix is singular: row ${row} of A (row ${String(local)} of machine ${index}'s ${rows.length}) is numerically a linear ` +
        "combination of the machine's other rows " +
        `(the Cholesky factorization of A_i A_i^T met a relative pivot of ${Number(error.details.relativePivot).toPrecision(3)}). ` +
        // The factorization squares the rows' conditioning: a nonsingular A whose machine holds nearly dependent rows
        // (cond(A) 2.2e11) lands here, where the dense path's QR takes it.
        'If A is nonsingular and only nearly so on this machine, the dense path (dense rows or a Matrix Market array, ' +
        'n <= MAX_N) takes it, or a partition that puts the nearly dependent rows on different machines.',
      { ...error.details, machine: index, row, machineRow: local },
    );
  }
}

/**
 * Machine i's values' region in `staging` (each reserved here, filled by whichever thread builds the machine): their
 * byte offsets.
 */
function reserveValues(staging: ArenaStaging, A: CsrMatrix, rowsOf: readonly Int32Array[]): Float64Array {
  const { rowPtr } = A;
  return Float64Array.from(rowsOf, (rows) => {
    let nnz = 0;
    for (let k = 0; k < rows.length; k++) nnz += rowPtr[rows[k] + 1] - rowPtr[rows[k]];
    return staging.reserve(nnz * Float64Array.BYTES_PER_ELEMENT);
  });
}

export function* buildSparseSystemWork(problem: CsrProblem, kernels: Kernels = selectedKernels()): Work<CsrSystem> {
  const { m, rowsOf } = problem.partition;
  const threads = threadsForSetupTasks(nnzOf(problem.A), m);
  const staging = machineValueStaging(threads > 1);
  const staged = staging === null ? null : { staging, offsets: reserveValues(staging, problem.A, rowsOf) };
  const built = yield* runTasksWork({
    taskModule: import.meta.url,
    ...onKernels(kernels),
    tasks: m,
    threads,
    spec: {
      n: problem.n,
      A: problem.A,
      b: problem.b,
      rowsOf,
      shared: threads > 1,
      staged: staged === null ? null : { memory: staged.staging.memory, offsets: staged.offsets },
    },
    *runTask(spec, index) {
      // A time-slice point before each machine (one machine's work does not yield).
      yield undefined;
      return sparseMachine(kernels, spec, index);
    },
    progress: (done) => ({ phase: 'bases', fraction: done / m }),
  });
  // A machine built on another thread has its values on that thread's buffer object of the staging memory: viewed on
  // this thread's, where the arena recognizes them.
  const machines =
    staged === null
      ? built
      : built.map((machine, i) => ({
          ...machine,
          a: { ...machine.a, values: staged.staging.view(Float64Array, staged.offsets[i], machine.a.values.length) },
        }));
  return {
    storage: 'csr',
    n: problem.n,
    m,
    A: problem.A,
    b: problem.b,
    xTrue: problem.xTrue,
    partition: problem.partition,
    machines,
    arenaStaging: staging,
  };
}

export function buildSparseSystem(problem: CsrProblem): CsrSystem {
  return runSync(buildSparseSystemWork(problem));
}
