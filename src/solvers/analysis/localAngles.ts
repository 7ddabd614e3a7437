/**
 * Row-angle metrics (SPEC "Heterogeneity metrics", Theorem 4):
 *  - phi_i: smallest angle between two rows of A_i (absolute cosine, so in [0, pi/2]); null when p_i = 1;
 *  - theta_min^(l): smallest angle between row l and any other row of A;
 *  - the row-norm ratio max_k |a_k| / min_k |a_k|;
 *  - Theorem 4's bound kappa(A) >= max_k |a_k| / min_l (|a_l| sin theta_min^(l)).
 *
 * All of them come from one scan of the normalized row products |u_k . u_l| (u = a / |a|): dense
 * (blocked U U^T, n^3 / 2 multiply-adds) or, for sparse matrices, only over pairs of rows sharing a
 * column (a column -> rows index; sherman5 has ~6 nonzeros per row). arccos of a cosine near 1 is
 * inaccurate (error ~ eps / theta), so every pair whose |cos| is at least NEAR_PARALLEL_COSINE and
 * within the dot-product error bound of its row's (or machine's) running maximum is re-evaluated as
 * 2 atan2(|u - v|, |u + v|) (sign of v chosen to fold into [0, pi/2]). The true minimizer is always
 * among them, so the minima are accurate to a few eps even for tiny angles.
 * The dense products run on the kernels passed in (../linalg/kernels.ts), in the tiles those kernels like.
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseMatrix } from '../matrix.js';
import { norm2 } from '../matrix.js';
import type { Partition } from '../problem.js';
import type { CsrMatrix } from '../sparse/csr.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { multiplyByTransposeRows } from '../linalg/products.js';
import { NEAR_PARALLEL_COSINE } from './principalAngles.js';

export interface LocalAngles {
  /** phi[i], null when machine i holds one row. */
  phi: (number | null)[];
  phiMin: number | null;
  rowNorms: Float64Array;
  rowNormRatio: number;
  /** theta_min^(l) for every row (pi/2 when the row is orthogonal to every other row, or n = 1); null from a 'machine-rows' scan. */
  thetaMin: Float64Array | null;
  /** Theorem 4's lower bound on kappa(A); null from a 'machine-rows' scan (a tall A, which it does not bound). */
  theorem4KappaALowerBound: number | null;
}

/** Angle between the lines spanned by unit vectors u and v: 2 atan2(|u - v|, |u + v|) folded into [0, pi/2]. */
export function lineAngleOfUnitVectors(u: Float64Array, uOff: number, v: Float64Array, vOff: number, len: number): number {
  let minus = 0;
  let plus = 0;
  for (let t = 0; t < len; t++) {
    const a = u[uOff + t];
    const b = v[vOff + t];
    minus += (a - b) * (a - b);
    plus += (a + b) * (a + b);
  }
  return foldedAngle(minus, plus);
}

function foldedAngle(minusSquared: number, plusSquared: number): number {
  const dMinus = Math.sqrt(minusSquared);
  const dPlus = Math.sqrt(plusSquared);
  return 2 * Math.atan2(Math.min(dMinus, dPlus), Math.max(dMinus, dPlus));
}

/** Angle between the lines spanned by two vectors (any norms), accurate for tiny angles. */
export function lineAngle(u: ArrayLike<number>, v: ArrayLike<number>): number {
  const n = u.length;
  const nu = norm2(u);
  const nv = norm2(v);
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    a[t] = u[t] / nu;
    b[t] = v[t] / nv;
  }
  return lineAngleOfUnitVectors(a, 0, b, 0, n);
}

/**
 * What a scan over pairs of rows leaves: per row and per machine, the largest |cos| met and the
 * smallest accurately recomputed angle among the near-maximal pairs. Scans over disjoint sets of
 * pairs merge exactly (mergeLocalAnglesScans): maxima are exact, and each minimum is attained by
 * the true minimizer, which every scan that meets it recomputes whatever came before.
 */
export interface LocalAnglesScan {
  readonly maxCos: Float64Array;
  readonly bestAngle: Float64Array;
  readonly machineMaxCos: Float64Array;
  readonly machineBestAngle: Float64Array;
}

/** Running minima over the pairs of the scan (see the module comment). */
class PairTracker implements LocalAnglesScan {
  readonly maxCos: Float64Array;
  readonly bestAngle: Float64Array;
  readonly machineMaxCos: Float64Array;
  readonly machineBestAngle: Float64Array;
  /** Bound on the error of a computed |u_k . u_l| (twice gamma_n plus the normalizations). */
  readonly slack: number;

  constructor(
    n: number,
    m: number,
    private readonly assignment: Int32Array,
    private readonly accurate: (k: number, l: number) => number,
  ) {
    this.maxCos = new Float64Array(n);
    this.bestAngle = new Float64Array(n).fill(Infinity);
    this.machineMaxCos = new Float64Array(m);
    this.machineBestAngle = new Float64Array(m).fill(Infinity);
    this.slack = 2 * (n + 4) * Number.EPSILON;
  }

  visit(k: number, l: number, absCos: number): void {
    const { maxCos, slack } = this;
    if (absCos > maxCos[k]) maxCos[k] = absCos;
    if (absCos > maxCos[l]) maxCos[l] = absCos;
    const machine = this.assignment[k];
    const same = machine === this.assignment[l];
    if (same && absCos > this.machineMaxCos[machine]) this.machineMaxCos[machine] = absCos;
    if (absCos < NEAR_PARALLEL_COSINE) return;
    const forK = absCos >= maxCos[k] - slack;
    const forL = absCos >= maxCos[l] - slack;
    const forMachine = same && absCos >= this.machineMaxCos[machine] - slack;
    if (!forK && !forL && !forMachine) return;
    const angle = this.accurate(k, l);
    if (angle < this.bestAngle[k]) this.bestAngle[k] = angle;
    if (angle < this.bestAngle[l]) this.bestAngle[l] = angle;
    if (same && angle < this.machineBestAngle[machine]) this.machineBestAngle[machine] = angle;
  }
}

function rowAngle(scan: LocalAnglesScan, l: number): number {
  return scan.maxCos[l] >= NEAR_PARALLEL_COSINE ? scan.bestAngle[l] : Math.acos(scan.maxCos[l]);
}

function machineAngle(scan: LocalAnglesScan, i: number): number {
  return scan.machineMaxCos[i] >= NEAR_PARALLEL_COSINE ? scan.machineBestAngle[i] : Math.acos(scan.machineMaxCos[i]);
}

/** The scan of all pairs from scans of disjoint sets of pairs (see LocalAnglesScan). */
export function mergeLocalAnglesScans(scans: readonly LocalAnglesScan[]): LocalAnglesScan {
  const [first, ...rest] = scans;
  const maxCos = Float64Array.from(first.maxCos);
  const bestAngle = Float64Array.from(first.bestAngle);
  const machineMaxCos = Float64Array.from(first.machineMaxCos);
  const machineBestAngle = Float64Array.from(first.machineBestAngle);
  for (const scan of rest) {
    for (let l = 0; l < maxCos.length; l++) {
      maxCos[l] = Math.max(maxCos[l], scan.maxCos[l]);
      bestAngle[l] = Math.min(bestAngle[l], scan.bestAngle[l]);
    }
    for (let i = 0; i < machineMaxCos.length; i++) {
      machineMaxCos[i] = Math.max(machineMaxCos[i], scan.machineMaxCos[i]);
      machineBestAngle[i] = Math.min(machineBestAngle[i], scan.machineBestAngle[i]);
    }
  }
  return { maxCos, bestAngle, machineMaxCos, machineBestAngle };
}

/**
 * Rows of the scans' part: the pairs (k, l), l > k, of the panels whose first row is in [from, to).
 * Panels are fixed by n alone, so parts over consecutive ranges compute the same products as one
 * scan over [0, n).
 */
export interface RowRange {
  from: number;
  to: number;
}

/** Pairs (k, l), l > k, with k in [from, to): the work of a range of the scan, for splitting it evenly. */
export function pairsOfRows(n: number, range: RowRange): number {
  const rowsBelow = (k: number): number => (k * (2 * n - k - 1)) / 2;
  return rowsBelow(range.to) - rowsBelow(range.from);
}

/**
 * Panels of rows [r0, r1) of U against column chunks of rows [r0, n): one product per tile
 * (kernels.productTile: 64 x 256 for the packed WebAssembly product, 8 x 512 for the TypeScript
 * loop's cache blocking, whole rows of as many multiply-adds as one dgemm call may do for the
 * addon's), then the visits of the pairs l > k.
 */
function* denseScanWork(kernels: Kernels, units: Float64Array, n: number, nc: number, tracker: PairTracker, range: RowRange): Work<void> {
  const tile = kernels.productTile(n, nc);
  const panel = new Float64Array(Math.min(n, tile.rows) * Math.min(n, tile.cols));
  let done = 0;
  const total = Math.max(1, pairsOfRows(n, range) + (range.to - range.from));
  for (let r0 = 0; r0 < n; r0 += tile.rows) {
    if (r0 < range.from || r0 >= range.to) continue;
    const r1 = Math.min(n, r0 + tile.rows);
    for (let c0 = r0; c0 < n; c0 += tile.cols) {
      const c1 = Math.min(n, c0 + tile.cols);
      const cols = c1 - c0;
      multiplyByTransposeRows(kernels, units, units.subarray(c0 * nc), nc, r0, r1, cols, panel, cols, r0);
      for (let k = r0; k < r1; k++) {
        const off = (k - r0) * cols - c0;
        for (let l = Math.max(c0, k + 1); l < c1; l++) tracker.visit(k, l, Math.abs(panel[off + l]));
      }
      done += (r1 - r0) * cols;
      yield { phase: 'local-angles', fraction: Math.min(1, done / total) };
    }
  }
}

interface CompressedRows {
  rowPtr: Int32Array;
  colIdx: Int32Array;
  values: Float64Array;
}

function* compressedUnitRowsWork(a: DenseMatrix, rowNorms: Float64Array): Work<CompressedRows> {
  const n = a.rows;
  const nc = a.cols;
  const rowPtr = new Int32Array(n + 1);
  let nnz = 0;
  for (let i = 0; i < n; i++) {
    const off = i * nc;
    for (let j = 0; j < nc; j++) if (a.data[off + j] !== 0) nnz++;
    rowPtr[i + 1] = nnz;
    if ((i & 127) === 127) yield undefined;
  }
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  for (let i = 0, p = 0; i < n; i++) {
    const off = i * nc;
    for (let j = 0; j < nc; j++) {
      const v = a.data[off + j];
      if (v !== 0) {
        colIdx[p] = j;
        values[p++] = v / rowNorms[i];
      }
    }
    if ((i & 127) === 127) yield undefined;
  }
  return { rowPtr, colIdx, values };
}

/**
 * The pairs (k, l), l > k, k in `range`, of rows sharing a column; with `blockEnd`, only those with l < blockEnd[k] (rows
 * grouped in blocks, blockEnd[k] one past the last row of k's block). Each column's row list is ascending, so the rows
 * after k in it are its partners: the scan starts past k's own entry and stops at its block's end.
 */
function* sparseScanWork(
  rows: CompressedRows,
  n: number,
  nc: number,
  tracker: PairTracker,
  scatter: Float64Array,
  range: RowRange,
  blockEnd?: Int32Array,
): Work<void> {
  const { rowPtr, colIdx } = rows;
  // Column -> rows index, and where each entry sits in its column's list.
  const colPtr = new Int32Array(nc + 1);
  for (let p = 0; p < colIdx.length; p++) colPtr[colIdx[p] + 1]++;
  for (let j = 0; j < nc; j++) colPtr[j + 1] += colPtr[j];
  const colRows = new Int32Array(colIdx.length);
  const positionOfEntry = new Int32Array(colIdx.length);
  const fill = colPtr.slice(0, nc);
  for (let i = 0; i < n; i++) {
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      positionOfEntry[p] = fill[colIdx[p]];
      colRows[fill[colIdx[p]]++] = i;
    }
  }

  const stamp = new Int32Array(n).fill(-1);
  const values = rows.values;
  for (let k = range.from; k < range.to; k++) {
    const end = blockEnd === undefined ? n : blockEnd[k];
    for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) scatter[colIdx[p]] = values[p];
    for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) {
      const last = colPtr[colIdx[p] + 1];
      for (let q = positionOfEntry[p] + 1; q < last; q++) {
        const l = colRows[q];
        if (l >= end) break;
        if (stamp[l] === k) continue;
        stamp[l] = k;
        let dot = 0;
        for (let t = rowPtr[l]; t < rowPtr[l + 1]; t++) dot += scatter[colIdx[t]] * values[t];
        tracker.visit(k, l, Math.abs(dot));
      }
    }
    for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) scatter[colIdx[p]] = 0;
    if ((k & 63) === 63) yield { phase: 'local-angles', fraction: (k + 1 - range.from) / Math.max(1, range.to - range.from) };
  }
}

/** Accurate angle of two sparse unit rows. */
function sparseLineAngle(rows: CompressedRows, k: number, l: number, scatterK: Float64Array, markL: Int32Array): number {
  const { rowPtr, colIdx, values } = rows;
  for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) scatterK[colIdx[p]] = values[p];
  let minus = 0;
  let plus = 0;
  for (let t = rowPtr[l]; t < rowPtr[l + 1]; t++) {
    const j = colIdx[t];
    markL[j] = l;
    const a = scatterK[j];
    const b = values[t];
    minus += (a - b) * (a - b);
    plus += (a + b) * (a + b);
  }
  for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) {
    const j = colIdx[p];
    if (markL[j] !== l) {
      const a = values[p];
      minus += a * a;
      plus += a * a;
    }
    scatterK[j] = 0;
  }
  return foldedAngle(minus, plus);
}

export function* localAnglesWork(kernels: Kernels, a: DenseMatrix, partition: Partition): Work<LocalAngles> {
  const { scan, rowNorms } = yield* localAnglesScanWork(kernels, a, partition, { from: 0, to: a.rows });
  return localAnglesFrom(scan, rowNorms, partition);
}

/**
 * The scan of the pairs of rows (k, l), l > k, k in `rows` (see RowRange), and every row's norm:
 * a part of localAnglesWork, whose parts over consecutive ranges merge (mergeLocalAnglesScans)
 * into the same values, bit for bit, as the whole scan.
 */
export function* localAnglesScanWork(
  kernels: Kernels,
  a: DenseMatrix,
  partition: Partition,
  rows: RowRange,
): Work<{ scan: LocalAnglesScan; rowNorms: Float64Array }> {
  const n = a.rows;
  const nc = a.cols;
  const m = partition.m;
  const rowNorms = new Float64Array(n);
  let nnz = 0;
  for (let i = 0; i < n; i++) {
    rowNorms[i] = norm2(a.data, i * nc, nc);
    const off = i * nc;
    for (let j = 0; j < nc; j++) if (a.data[off + j] !== 0) nnz++;
    if ((i & 127) === 127) yield undefined;
  }

  // Sparse scan cost ~ sum_j |col_j|^2 (1 + nnz per row) / 2 against n^2 nc / 2 for the dense one.
  const colCount = new Float64Array(nc);
  for (let i = 0; i < n; i++) {
    const off = i * nc;
    for (let j = 0; j < nc; j++) if (a.data[off + j] !== 0) colCount[j]++;
    if ((i & 127) === 127) yield undefined;
  }
  let pairWork = 0;
  for (let j = 0; j < nc; j++) pairWork += colCount[j] * colCount[j];
  const sparseCost = (pairWork * (1 + nnz / Math.max(n, 1))) / 2;
  const denseCost = (n * n * nc) / 2;
  const useSparse = 4 * sparseCost < denseCost;

  let tracker: PairTracker;
  if (useSparse) {
    const units = yield* compressedUnitRowsWork(a, rowNorms);
    tracker = yield* sparseScanOfUnitRowsWork(units, n, nc, partition.m, partition.assignment, rows);
  } else {
    const units = new Float64Array(n * nc);
    for (let i = 0; i < n; i++) {
      const off = i * nc;
      const inv = rowNorms[i];
      for (let j = 0; j < nc; j++) units[off + j] = a.data[off + j] / inv;
      if ((i & 127) === 127) yield undefined;
    }
    tracker = new PairTracker(n, m, partition.assignment, (k, l) => lineAngleOfUnitVectors(units, k * nc, units, l * nc, nc));
    yield* denseScanWork(kernels, units, n, nc, tracker, rows);
  }
  return { scan: tracker, rowNorms };
}

/** The sparse scan over unit rows (pairs of rows sharing a column), its tracker filled; `blockEnd` as sparseScanWork's. */
function* sparseScanOfUnitRowsWork(
  rows: CompressedRows,
  n: number,
  nc: number,
  m: number,
  assignment: Int32Array,
  range: RowRange,
  blockEnd?: Int32Array,
): Work<PairTracker> {
  const scatterK = new Float64Array(nc);
  const markL = new Int32Array(nc).fill(-1);
  const tracker = new PairTracker(n, m, assignment, (k, l) => sparseLineAngle(rows, k, l, scatterK, markL));
  yield* sparseScanWork(rows, n, nc, tracker, new Float64Array(nc), range, blockEnd);
  return tracker;
}

/**
 * Which pairs of rows the local angles compare: 'all-rows' (every pair of A's rows: phi_i, theta_min^(l) and Theorem 4's
 * bound) or 'machine-rows' (pairs within a machine: phi_i only). A tall A takes the second: Theorem 4 does not bound
 * its kappa(A) (rows e1, e1, e2, e2: kappa(A) = 1, the bound infinite), and its all-rows scan grows as the square of
 * the rows per column (200,000 x 500 with 10 nonzeros a row: 8e9 pairs; within 100 machines, 100 times fewer).
 */
export type LocalAnglesScope = 'all-rows' | 'machine-rows';

/**
 * The same metrics for A in compressed sparse rows (the sparse path): rows with
 * disjoint supports are orthogonal, so only pairs sharing a column are visited (the sparse scan
 * above); O(nnz + n) memory beyond the pairs' work, nothing n x n. With 'machine-rows', A's rows are
 * first grouped by machine, so each row's partners in a column's list are the rows after it up to its machine's end.
 */
export function* localAnglesOfCsrWork(a: CsrMatrix, partition: Partition, scope: LocalAnglesScope = 'all-rows'): Work<LocalAngles> {
  const n = a.rows;
  const { rowPtr, colIdx, values } = a;
  const rowNorms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    rowNorms[i] = norm2(values, rowPtr[i], rowPtr[i + 1] - rowPtr[i]);
    if ((i & 4095) === 4095) yield undefined;
  }
  if (scope === 'all-rows') {
    const units = new Float64Array(values.length);
    for (let i = 0; i < n; i++) {
      for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) units[p] = values[p] / rowNorms[i];
      if ((i & 4095) === 4095) yield undefined;
    }
    const rows = { rowPtr, colIdx, values: units };
    const tracker = yield* sparseScanOfUnitRowsWork(rows, n, a.cols, partition.m, partition.assignment, { from: 0, to: n });
    return localAnglesFrom(tracker, rowNorms, partition);
  }
  // Machine i's rows at [start_i, end_i) of the grouped copy, in their order.
  const groupedPtr = new Int32Array(n + 1);
  const groupedCols = new Int32Array(values.length);
  const units = new Float64Array(values.length);
  const groupedAssignment = new Int32Array(n);
  const blockEnd = new Int32Array(n);
  let row = 0;
  for (let i = 0; i < partition.m; i++) {
    const own = partition.rowsOf[i];
    const end = row + own.length;
    for (const r of own) {
      let at = groupedPtr[row];
      for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++, at++) {
        groupedCols[at] = colIdx[p];
        units[at] = values[p] / rowNorms[r];
      }
      groupedPtr[row + 1] = at;
      groupedAssignment[row] = i;
      blockEnd[row++] = end;
    }
    yield undefined;
  }
  const rows = { rowPtr: groupedPtr, colIdx: groupedCols, values: units };
  const tracker = yield* sparseScanOfUnitRowsWork(rows, n, a.cols, partition.m, groupedAssignment, { from: 0, to: n }, blockEnd);
  return localAnglesFrom(tracker, rowNorms, partition, false);
}

/**
 * phi_i, the row-norm ratio and, from a scan of all pairs (`allRows`), theta_min^(l) and Theorem 4's bound; from a
 * scan of the machines' own pairs those two are null.
 */
export function localAnglesFrom(scan: LocalAnglesScan, rowNorms: Float64Array, partition: Partition, allRows = true): LocalAngles {
  const n = rowNorms.length;
  const m = partition.m;
  let maxNorm = 0;
  let minNorm = Infinity;
  for (let l = 0; l < n; l++) {
    maxNorm = Math.max(maxNorm, rowNorms[l]);
    minNorm = Math.min(minNorm, rowNorms[l]);
  }
  const thetaMin = allRows ? new Float64Array(n) : null;
  let minScaledSine = Infinity;
  for (let l = 0; thetaMin !== null && l < n; l++) {
    thetaMin[l] = n === 1 ? Math.PI / 2 : rowAngle(scan, l);
    minScaledSine = Math.min(minScaledSine, rowNorms[l] * Math.sin(thetaMin[l]));
  }
  const phi: (number | null)[] = [];
  let phiMin: number | null = null;
  for (let i = 0; i < m; i++) {
    if (partition.sizes[i] < 2) {
      phi.push(null);
      continue;
    }
    const angle = machineAngle(scan, i);
    phi.push(angle);
    if (phiMin === null || angle < phiMin) phiMin = angle;
  }
  return {
    phi,
    phiMin,
    rowNorms,
    rowNormRatio: maxNorm / minNorm,
    thetaMin,
    theorem4KappaALowerBound: thetaMin === null ? null : maxNorm / minScaledSine,
  };
}

export function computeLocalAngles(a: DenseMatrix, partition: Partition, kernels: Kernels = selectedKernels()): LocalAngles {
  return runSync(localAnglesWork(kernels, a, partition));
}
