/**
 * The off-diagonal blocks G_ij = Q_i^T Q_j (p_i x p_j, i < j) of the Gram matrix G = Q^T Q of all
 * machines' bases Q = [Q_1 ... Q_m] (SPEC "Building blocks"). Computed once, they serve both
 *  - the principal angles: cos(theta_ij) = sigma_max(G_ij) (Bjorck-Golub), and
 *  - kappa(S): S = Q Q^T and G = Q^T Q share their nonzero spectrum, and G has identity diagonal
 *    blocks, so lambda_max(S) = lambda_max(G) by Lanczos on G (`gramOperator`).
 * Each basis lives on its machine's column support C_i, so G_ij only involves C_i ∩ C_j; disjoint
 * supports give G_ij = 0 exactly (stored as null): theta_ij = pi/2 (Proposition 1).
 */
import type { Work } from '../cooperative.js';
import { runSync } from '../cooperative.js';
import type { DenseMachineData } from '../distributed/distributedSystem.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { SymmetricOperator } from '../eigen/lanczos.js';
import { multiplyByTransposeRows } from '../linalg/products.js';

export interface GramBlocks {
  readonly m: number;
  /** p_i. */
  readonly sizes: readonly number[];
  /** offsets[i] = p_0 + ... + p_{i-1}: where Q_i's columns start in Q = [Q_1 ... Q_m]. */
  readonly offsets: readonly number[];
  /** Sum of the p_i (= n for a square system). */
  readonly size: number;
  /** All stored blocks, one after the other (one allocation even when m ~ n and blocks are 1 x 1). */
  readonly data: Float64Array;
  /**
   * Start of G_ij (row-major p_i x p_j) in `data` for the pair with index pairIndex(m, i, j), i < j;
   * -1 when C_i and C_j are disjoint (G_ij = 0 exactly, not stored).
   */
  readonly blockStart: Float64Array;
}

/**
 * The Gram matrix of a dense A's rows as the partition advisor's row graph computes it (../partitioning/rowGraph.ts):
 * rows normalized, then their products, so a_k . a_l = rowNorms[k] normalized[k * rows + l] rowNorms[l] (rows x rows,
 * symmetric).
 */
export interface RowGram {
  readonly rows: number;
  readonly normalized: Float64Array;
  readonly rowNorms: Float64Array;
}

/**
 * G_ij from the rows' Gram matrix instead of the bases: A_i = R_i^T Q_i^T, so G_ij = Q_i^T Q_j = R_i^{-T} (A_i A_j^T)
 * R_j^{-1}, two triangular solves (~p_i p_j (p_i + p_j) / 2 multiply-adds) where the product of the bases costs
 * p_i p_j c. Its error grows with the condition of R_i and R_j (./principalAngles.ts thetaHFromRowGramWork bounds it).
 * Into `out` (p_i x p_j, row-major); `scratch` holds p_i p_j numbers.
 */
export function gramBlockFromRowGram(
  kernels: Kernels,
  a: Pick<DenseMachineData, 'p' | 'rows' | 'r'>,
  b: Pick<DenseMachineData, 'p' | 'rows' | 'r'>,
  gram: RowGram,
  out: Float64Array,
  scratch: Float64Array,
): void {
  const { rows: n, normalized, rowNorms } = gram;
  const pa = a.p;
  const pb = b.p;
  // A_a A_b^T, transposed (p_b x p_a): the right-hand sides of R_b^{-T}. Row v of the Gram matrix read in order.
  for (let l = 0; l < pb; l++) {
    const v = b.rows[l];
    const row = v * n;
    for (let k = 0; k < pa; k++) {
      const u = a.rows[k];
      scratch[l * pa + k] = rowNorms[u] * normalized[row + u] * rowNorms[v];
    }
  }
  // (A_a A_b^T R_b^{-1})^T = R_b^{-T} (A_a A_b^T)^T, then back to p_a x p_b and R_a^{-T} on the left.
  kernels.dense.solveRTransposedBlock(b.r, pb, scratch, pa);
  for (let l = 0; l < pb; l++) for (let k = 0; k < pa; k++) out[k * pb + l] = scratch[l * pa + k];
  kernels.dense.solveRTransposedBlock(a.r, pa, out, pb);
}

/** Index of the pair (i, j), i < j, in lexicographic order. */
export function pairIndex(m: number, i: number, j: number): number {
  return (i * (2 * m - i - 1)) / 2 + (j - i - 1);
}

/** The pair (i, j), i < j, of lexicographic index `pair` among m machines (pairIndex's inverse). */
export function pairOfIndex(m: number, pair: number): [number, number] {
  let i = 0;
  let rest = pair;
  while (rest >= m - 1 - i) {
    rest -= m - 1 - i;
    i++;
  }
  return [i, i + 1 + rest];
}

/** offsets[i] = sizes[0] + ... + sizes[i-1]. */
export function offsetsOf(sizes: readonly number[]): number[] {
  const offsets: number[] = [];
  let size = 0;
  for (const p of sizes) {
    offsets.push(size);
    size += p;
  }
  return offsets;
}

/** Multiply-adds between two yields (a few milliseconds). */
const WORK_PER_YIELD = 2_000_000;

/** G_ij (a view into gram.data), or null when the supports of i and j are disjoint. */
export function gramBlock(gram: GramBlocks, i: number, j: number): Float64Array | null {
  if (!(i < j)) throw new RangeError(`gramBlock needs i < j, got (${i}, ${j})`);
  const start = gram.blockStart[pairIndex(gram.m, i, j)];
  if (start < 0) return null;
  return gram.data.subarray(start, start + gram.sizes[i] * gram.sizes[j]);
}

/** Positions in `a` and in `b` (ascending Int32Arrays) of their common values. */
export function intersectSupports(a: Int32Array, b: Int32Array): { inA: Int32Array; inB: Int32Array } {
  const inA: number[] = [];
  const inB: number[] = [];
  let s = 0;
  let t = 0;
  while (s < a.length && t < b.length) {
    if (a[s] === b[t]) {
      inA.push(s++);
      inB.push(t++);
    } else if (a[s] < b[t]) s++;
    else t++;
  }
  return { inA: Int32Array.from(inA), inB: Int32Array.from(inB) };
}

function gatherColumns(q: Float64Array, p: number, c: number, positions: Int32Array, out: Float64Array): Float64Array {
  const len = positions.length;
  for (let k = 0; k < p; k++) {
    const src = k * c;
    const dst = k * len;
    for (let t = 0; t < len; t++) out[dst + t] = q[src + positions[t]];
  }
  return out;
}

export function* gramBlocksWork(kernels: Kernels, machines: readonly DenseMachineData[]): Work<GramBlocks> {
  const gram = yield* gramBlocksLayoutWork(machines);
  const { m, sizes, data, blockStart } = gram;
  const totalPairs = (m * (m - 1)) / 2;
  // Work between two progress reports: about one block of p^2 c multiply-adds.
  const pending = { madds: 0 };
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      const pair = pairIndex(m, i, j);
      const start = blockStart[pair];
      if (start < 0) continue;
      const g = data.subarray(start, start + sizes[i] * sizes[j]);
      yield* gramBlockIntoWork(kernels, machines[i], machines[j], g, pending, (pair + 1) / totalPairs);
    }
  }
  return gram;
}

/** The Gram blocks' layout (which supports meet, where each stored block goes), `data` zero: gramBlockIntoWork fills it. */
export function* gramBlocksLayoutWork(machines: readonly DenseMachineData[]): Work<GramBlocks> {
  const m = machines.length;
  const sizes = machines.map((mc) => mc.p);
  const offsets = offsetsOf(sizes);
  const totalPairs = (m * (m - 1)) / 2;
  const blockStart = new Float64Array(totalPairs).fill(-1);
  let stored = 0;
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      if (!blockIsStored(machines[i], machines[j])) continue;
      blockStart[pairIndex(m, i, j)] = stored;
      stored += sizes[i] * sizes[j];
    }
    yield undefined;
  }
  return { m, sizes, offsets, size: m === 0 ? 0 : offsets[m - 1] + sizes[m - 1], data: new Float64Array(stored), blockStart };
}

/**
 * G_ab = Q_a^T Q_b (p_a x p_b, row-major) into `g`, over the common support, by row slices; the
 * one computation of a Gram block, shared by gramBlocksWork and the split analysis
 * (./splitAnalysis.ts), so both give the same bits. `pending` counts multiply-adds since the last
 * progress report (one report per WORK_PER_YIELD, with `fraction`).
 */
export function* gramBlockIntoWork(
  kernels: Kernels,
  a: DenseMachineData,
  b: DenseMachineData,
  g: Float64Array,
  pending: { madds: number },
  fraction: number,
): Work<void> {
  let x: Float64Array;
  let y: Float64Array;
  let len: number;
  if (a.full && b.full) {
    x = a.q;
    y = b.q;
    len = a.c;
  } else {
    const { inA, inB } = intersectSupports(a.cols, b.cols);
    len = inA.length;
    x = gatherColumns(a.q, a.p, a.c, inA, new Float64Array(a.p * len));
    y = gatherColumns(b.q, b.p, b.c, inB, new Float64Array(b.p * len));
  }
  // As many rows per call as the kernels like (one dgemm of NATIVE_MADDS_PER_CALL multiply-adds; two register blocks of the loop).
  const slice = kernels.dense.productRows(b.p * len);
  for (let r = 0; r < a.p; r += slice) {
    multiplyByTransposeRows(kernels, x, y, len, r, Math.min(a.p, r + slice), b.p, g, b.p);
    pending.madds += Math.min(slice, a.p - r) * b.p * len;
    if (pending.madds >= WORK_PER_YIELD) {
      pending.madds = 0;
      yield { phase: 'gram-blocks', fraction };
    }
  }
}

/** Whether G_ab is stored: the supports of a and b meet (else G_ab = 0 exactly). */
export function blockIsStored(a: DenseMachineData, b: DenseMachineData): boolean {
  return (a.full && b.full) || supportsMeet(a.cols, b.cols);
}

/** Whether two ascending supports share a column. */
function supportsMeet(a: Int32Array, b: Int32Array): boolean {
  let s = 0;
  let t = 0;
  while (s < a.length && t < b.length) {
    if (a[s] === b[t]) return true;
    if (a[s] < b[t]) s++;
    else t++;
  }
  return false;
}

export function computeGramBlocks(machines: readonly DenseMachineData[], kernels: Kernels = selectedKernels()): GramBlocks {
  return runSync(gramBlocksWork(kernels, machines));
}

/** True when every off-diagonal block is zero: G = I, so S = I and kappa(S) = 1 (Proposition 1). */
export function gramIsIdentity(gram: GramBlocks): boolean {
  const { data } = gram;
  for (let k = 0; k < data.length; k++) if (data[k] !== 0) return false;
  return true;
}

/** x -> G x with G = Q^T Q: identity diagonal blocks plus G_ij and G_ij^T off the diagonal. */
export function gramOperator(kernels: Kernels, gram: GramBlocks): SymmetricOperator {
  const { m, sizes, offsets, size, data, blockStart } = gram;
  const dense = kernels.dense;
  return {
    size,
    apply(x: Float64Array, y: Float64Array): void {
      y.set(x.subarray(0, size));
      for (let i = 0; i < m; i++) {
        const pi = sizes[i];
        const oi = offsets[i];
        for (let j = i + 1; j < m; j++) {
          const start = blockStart[pairIndex(m, i, j)];
          if (start < 0) continue;
          const pj = sizes[j];
          const oj = offsets[j];
          dense.addBlockAndTransposeProduct(data, start, pi, pj, x, oi, oj, y);
        }
      }
    },
  };
}
