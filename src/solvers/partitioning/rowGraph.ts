/**
 * The row graph of A, which the partition advisor cuts: rows i and j are joined when they share a column, the edge
 * weighted by |a_i . a_j| / (|a_i| |a_j|), the cosine of the rows as in ABCD's GRIP (on a dense A, each row's heaviest
 * ROW_NEIGHBOURS couplings). Rows are
 * normalized first because kappa(S) does not see a row's scale (Q_i spans the same space), and an
 * unnormalized weight would let a long row outweigh the geometry. Heavy edges are the couplings
 * between machines that push S away from I: a partition that cuts light edges keeps the machines'
 * row spaces near orthogonal.
 */
import type { RowGram } from '../analysis/gramBlocks.js';
import type { Kernels } from '../linalg/kernels.js';
import { multiplyByTransposeRows } from '../linalg/products.js';
import type { CsrMatrix, DenseMatrix } from '../matrix.js';
import { transpose } from '../sparse/csr.js';

/** An undirected graph without self-loops: neighbours of v are idx[ptr[v] .. ptr[v + 1]), each edge stored both ways. */
export interface WeightedGraph {
  readonly n: number;
  readonly ptr: Int32Array;
  readonly idx: Int32Array;
  /** Edge weights, aligned with idx. */
  readonly weight: Float64Array;
  /** Vertex weights (rows a coarse vertex stands for; 1 on the row graph). */
  readonly vertexWeight: Int32Array;
}

/**
 * Rows of the dense Gram product computed at a time (bounds the scratch to ROW_BLOCK x n: 8 MB at n = 4000). 256 against
 * 64: the row graph at n = 4000 native 1.28 -> 1.08 s, at n = 3000 TypeScript 2.80 -> 2.47 s.
 */
const ROW_BLOCK = 256;

/**
 * Couplings each row keeps: its heaviest ROW_NEIGHBOURS (an edge stays when either end keeps it). Every two rows of a
 * dense A share a column, so its row graph is complete, and the partitioners' passes cost n^2: at n = 4000 the
 * multilevel partitioner took 13 s, twice the analysis (native). A CSR A's rows are capped alike: a tall sparse
 * regression's columns are each shared by thousands of rows (20,000 x 500 with 10 nonzeros a row: 4,000 neighbours a
 * row, 80 million edges, and the multilevel partitioner took 154 s of its 183 s advice). The light edges left out are
 * the ones a good cut cuts anyway; a row with fewer nonzero couplings keeps them all (every row of a grid's matrix).
 */
export const ROW_NEIGHBOURS = 64;

function isCsr(a: DenseMatrix | CsrMatrix): a is CsrMatrix {
  return 'rowPtr' in a;
}

/** The row graph of a dense or CSR matrix (the dense one's products on `kernels`). */
export function rowGraph(kernels: Kernels, a: DenseMatrix | CsrMatrix): WeightedGraph {
  return isCsr(a) ? rowGraphOfCsr(a) : rowGraphOfDense(kernels, a, null);
}

/** rowGraph of a dense A, and the row Gram matrix it is made from (kept: rows^2 numbers, 128 MB at 4000 rows). */
export function rowGraphAndGram(kernels: Kernels, a: DenseMatrix): { graph: WeightedGraph; gram: RowGram } {
  const gram = { rows: a.rows, normalized: new Float64Array(a.rows * a.rows), rowNorms: new Float64Array(a.rows) };
  return { graph: rowGraphOfDense(kernels, a, gram), gram };
}

/**
 * Dense A: the normalized Gram matrix A A^T by blocks of rows, its upper triangle (one dgemm each on the native
 * backend), each row's ROW_NEIGHBOURS heaviest nonzeros kept (ties to the lower index), the graph symmetrized.
 * `gram`: filled with that Gram matrix and the row norms.
 */
function rowGraphOfDense(kernels: Kernels, a: DenseMatrix, gram: RowGram | null): WeightedGraph {
  const { rows: n, cols } = a;
  const normalized = new Float64Array(a.data);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < cols; j++) s += normalized[i * cols + j] ** 2;
    const scale = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = 0; j < cols; j++) normalized[i * cols + j] *= scale;
    if (gram !== null) gram.rowNorms[i] = Math.sqrt(s);
  }
  const keep = Math.min(ROW_NEIGHBOURS, Math.max(0, n - 1));
  const heaviest = new HeaviestCouplings(n, keep);
  const { floor } = heaviest;
  // The upper triangle only (A A^T is symmetric): block rows [r0, r1) against rows [r0, n), each product offered to both rows.
  const block = new Float64Array(ROW_BLOCK * n);
  for (let r0 = 0; r0 < n; r0 += ROW_BLOCK) {
    const r1 = Math.min(n, r0 + ROW_BLOCK);
    const width = n - r0;
    multiplyByTransposeRows(kernels, normalized, normalized.subarray(r0 * cols), cols, r0, r1, width, block, width, r0);
    for (let i = r0; i < r1; i++) {
      const row = (i - r0) * width - r0;
      if (gram !== null) gram.normalized.set(block.subarray(row + i, row + n), i * n + i);
      for (let j = i + 1; j < n; j++) {
        const w = Math.abs(block[row + j]);
        // Offers below a full heap's lightest are refused (a tie is offered: the index decides it).
        if (w > 0) {
          if (w >= floor[i]) heaviest.offer(i, j, w);
          if (w >= floor[j]) heaviest.offer(j, i, w);
        }
      }
    }
  }
  if (gram !== null) mirrorUpperTriangle(gram.normalized, n);
  return symmetrizedGraph(n, keptOfHeaps(n, keep, heaviest.kept, heaviest.keptWeight));
}

/**
 * Row i's kept couplings: kept[keptPtr[i] .. keptPtr[i + 1]) with their weights alongside (HeaviestCouplings' fixed
 * slots, -1: fewer, or a CSR row's own list).
 */
interface KeptCouplings {
  readonly keptPtr: Int32Array;
  readonly kept: Int32Array;
  readonly keptWeight: Float64Array;
}

/** HeaviestCouplings' slots as KeptCouplings (row v's at v * keep, up to its first -1). */
function keptOfHeaps(n: number, keep: number, kept: Int32Array, keptWeight: Float64Array): KeptCouplings {
  const keptPtr = new Int32Array(n + 1);
  let at = 0;
  for (let v = 0; v < n; v++) {
    for (let t = v * keep; t < (v + 1) * keep && kept[t] >= 0; t++) {
      kept[at] = kept[t];
      keptWeight[at++] = keptWeight[t];
    }
    keptPtr[v + 1] = at;
  }
  return { keptPtr, kept, keptWeight };
}

/**
 * The graph in which j is i's neighbour when j is among i's kept or i among j's, each vertex's neighbours ascending.
 * Both ends of a pair hold the same weight (the dense product is computed once; a CSR pair's two sums add the same
 * products in the same column order). In typed arrays: a Map per row took ~95 ms at n = 2000.
 */
function symmetrizedGraph(n: number, { keptPtr, kept, keptWeight }: KeptCouplings): WeightedGraph {
  // Every kept pair both ways, a pair kept by both ends twice.
  const rawPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++)
    for (let t = keptPtr[i]; t < keptPtr[i + 1]; t++) {
      rawPtr[i + 1]++;
      rawPtr[kept[t] + 1]++;
    }
  for (let v = 0; v < n; v++) rawPtr[v + 1] += rawPtr[v];
  const fill = rawPtr.slice(0, n);
  const rawIdx = new Int32Array(rawPtr[n]);
  const rawWeight = new Float64Array(rawPtr[n]);
  for (let i = 0; i < n; i++)
    for (let t = keptPtr[i]; t < keptPtr[i + 1]; t++) {
      const j = kept[t];
      rawIdx[fill[i]] = j;
      rawWeight[fill[i]++] = keptWeight[t];
      rawIdx[fill[j]] = i;
      rawWeight[fill[j]++] = keptWeight[t];
    }
  // Each vertex's distinct neighbours, ascending.
  const ptr = new Int32Array(n + 1);
  const idx = new Int32Array(rawPtr[n]);
  const weight = new Float64Array(rawPtr[n]);
  const seen = new Int32Array(n).fill(-1);
  const weightOf = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    let count = ptr[v];
    for (let e = rawPtr[v]; e < rawPtr[v + 1]; e++) {
      const j = rawIdx[e];
      if (seen[j] === v) continue;
      seen[j] = v;
      weightOf[j] = rawWeight[e];
      idx[count++] = j;
    }
    idx.subarray(ptr[v], count).sort();
    for (let e = ptr[v]; e < count; e++) weight[e] = weightOf[idx[e]];
    ptr[v + 1] = count;
  }
  return { n, ptr, idx: idx.slice(0, ptr[n]), weight: weight.slice(0, ptr[n]), vertexWeight: new Int32Array(n).fill(1) };
}

/** The lower triangle of a row-major n x n matrix from its upper one, by tiles (each read and written in cache). */
function mirrorUpperTriangle(x: Float64Array, n: number): void {
  const tile = 64;
  for (let i0 = 0; i0 < n; i0 += tile)
    for (let j0 = 0; j0 <= i0; j0 += tile)
      for (let i = i0; i < Math.min(n, i0 + tile); i++) for (let j = j0; j < Math.min(i, j0 + tile); j++) x[i * n + j] = x[j * n + i];
}

/** Entry a lighter than entry b: smaller weight, or equal weight and higher index. */
function lighter(weight: Float64Array, idx: Int32Array, a: number, b: number): boolean {
  return weight[a] < weight[b] || (weight[a] === weight[b] && idx[a] > idx[b]);
}

function swap(weight: Float64Array, idx: Int32Array, a: number, b: number): void {
  const w = weight[a];
  weight[a] = weight[b];
  weight[b] = w;
  const i = idx[a];
  idx[a] = idx[b];
  idx[b] = i;
}

/**
 * Each row's `keep` heaviest couplings offered to it, by one min-heap per row on (weight, -index): the lower index wins
 * a tie, so what is kept does not depend on the order of the offers. kept[v * keep + t] (-1: fewer), weights alongside.
 */
class HeaviestCouplings {
  readonly kept: Int32Array;
  readonly keptWeight: Float64Array;
  /** The lightest kept weight of a full heap (-Infinity until full): an offer below it is refused, so need not be made. */
  readonly floor: Float64Array;
  private readonly size: Int32Array;

  constructor(
    n: number,
    private readonly keep: number,
  ) {
    this.kept = new Int32Array(n * keep).fill(-1);
    this.keptWeight = new Float64Array(n * keep);
    this.floor = new Float64Array(n).fill(-Infinity);
    this.size = new Int32Array(n);
  }

  /** Row v's heap emptied (one heap reused row after row). */
  clear(v: number): void {
    this.size[v] = 0;
    this.floor[v] = -Infinity;
    this.kept.fill(-1, v * this.keep, (v + 1) * this.keep);
  }

  offer(v: number, j: number, w: number): void {
    const { keep, kept: idx, keptWeight: weight } = this;
    const base = v * keep;
    const size = this.size[v];
    if (size < keep) {
      let k = base + size;
      this.size[v]++;
      weight[k] = w;
      idx[k] = j;
      while (k > base) {
        const parent = base + ((k - base - 1) >> 1);
        if (!lighter(weight, idx, k, parent)) break;
        swap(weight, idx, k, parent);
        k = parent;
      }
      if (this.size[v] === keep) this.floor[v] = weight[base];
      return;
    }
    // Full (or keep = 0): (w, j) replaces the root only when the root is lighter; most offers end here.
    if (keep === 0 || !(weight[base] < w || (weight[base] === w && idx[base] > j))) return;
    weight[base] = w;
    idx[base] = j;
    for (let k = 0; ;) {
      const l = 2 * k + 1;
      if (l >= keep) break;
      let c = l;
      if (l + 1 < keep && lighter(weight, idx, base + l + 1, base + l)) c = l + 1;
      if (!lighter(weight, idx, base + c, base + k)) break;
      swap(weight, idx, base + c, base + k);
      k = c;
    }
    this.floor[v] = weight[base];
  }
}

/**
 * Products the CSR row graph may cost per stored entry of A (joiningColumns): a column shared by c rows costs c^2 of
 * them. A grid's matrix costs 5 an entry; a 200,000 x 500 regression with 10 nonzeros a row, every column shared by
 * 4,000 rows, would cost 4,000 (8e9 products).
 */
export const ROW_GRAPH_PRODUCTS_PER_ENTRY = 64;

/**
 * Which columns join their rows in the row graph (1) and which are left out (0): the sparsest first, while the products
 * sum_c c^2 stay within ROW_GRAPH_PRODUCTS_PER_ENTRY per entry of A (every column of a sparse square matrix). A column
 * shared by thousands of rows (an intercept, a regression's dense features) couples them all alike and tells a
 * partitioner nothing, as graph and hypergraph partitioners set dense rows and nets aside; the candidates cut from the
 * graph are then evaluated exactly, as any other.
 */
function joiningColumns(at: CsrMatrix): Uint8Array {
  const columns = at.rows;
  const joining = new Uint8Array(columns).fill(1);
  const budget = ROW_GRAPH_PRODUCTS_PER_ENTRY * at.rowPtr[columns];
  let products = 0;
  for (let c = 0; c < columns; c++) products += (at.rowPtr[c + 1] - at.rowPtr[c]) ** 2;
  if (products <= budget) return joining;
  const count = (c: number): number => at.rowPtr[c + 1] - at.rowPtr[c];
  const order = Int32Array.from({ length: columns }, (_, c) => c).sort((x, y) => count(x) - count(y) || x - y);
  products = 0;
  for (const c of order) {
    products += count(c) ** 2;
    if (products > budget) joining[c] = 0;
  }
  return joining;
}

/**
 * CSR A: for each row i, its products with the rows met through its columns (A^T's rows), accumulated in a dense
 * scratch; a row with more than ROW_NEIGHBOURS nonzero couplings keeps its heaviest (one heap, reused), and the graph
 * is then symmetrized (an edge stays when either end keeps it). Without such a row, every row's list is already the
 * other ends' mirror.
 */
function rowGraphOfCsr(a: CsrMatrix): WeightedGraph {
  const n = a.rows;
  const { rowPtr, colIdx, values } = a;
  const norms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) s += values[p] ** 2;
    norms[i] = s > 0 ? Math.sqrt(s) : 1;
  }
  const at = transpose(a);
  const joining = joiningColumns(at);
  const accumulator = new Float64Array(n);
  const seen = new Int32Array(n).fill(-1);
  const touched = new Int32Array(n);
  const heaviest = new HeaviestCouplings(1, ROW_NEIGHBOURS);
  let capped = false;
  // Written straight into the graph's arrays (grown by doubling), not a typed array per row: millions of small
  // allocations at n = 10^6 (the advice's candidate assignments 32 -> 23 s there).
  const ptr = new Int32Array(n + 1);
  let idx = new Int32Array(Math.max(16, 2 * colIdx.length));
  let weight = new Float64Array(idx.length);
  let nnz = 0;
  for (let i = 0; i < n; i++) {
    let count = 0;
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      const c = colIdx[p];
      if (joining[c] === 0) continue;
      const aic = values[p];
      for (let q = at.rowPtr[c]; q < at.rowPtr[c + 1]; q++) {
        const j = at.colIdx[q];
        if (j === i) continue;
        if (seen[j] !== i) {
          seen[j] = i;
          accumulator[j] = 0;
          touched[count++] = j;
        }
        accumulator[j] += aic * at.values[q];
      }
    }
    if (count > ROW_NEIGHBOURS) {
      // Offers below a full heap's lightest are refused (a tie is offered: the index decides it).
      capped = true;
      heaviest.clear(0);
      for (let k = 0; k < count; k++) {
        const j = touched[k];
        const w = Math.abs(accumulator[j]) / (norms[i] * norms[j]);
        if (w > 0 && w >= heaviest.floor[0]) heaviest.offer(0, j, w);
      }
      count = 0;
      for (let t = 0; t < ROW_NEIGHBOURS && heaviest.kept[t] >= 0; t++) touched[count++] = heaviest.kept[t];
    }
    const rowNeighbours = touched.subarray(0, count).sort();
    if (nnz + count > idx.length) {
      const capacity = Math.max(2 * idx.length, nnz + count);
      const grownIdx = new Int32Array(capacity);
      grownIdx.set(idx.subarray(0, nnz));
      const grownWeight = new Float64Array(capacity);
      grownWeight.set(weight.subarray(0, nnz));
      idx = grownIdx;
      weight = grownWeight;
    }
    // Rows sharing a column whose products cancel exactly are still joined (the pattern decides), with weight 0.
    for (let k = 0; k < count; k++) {
      const j = rowNeighbours[k];
      idx[nnz + k] = j;
      weight[nnz + k] = Math.abs(accumulator[j]) / (norms[i] * norms[j]);
    }
    nnz += count;
    ptr[i + 1] = nnz;
  }
  if (capped) return symmetrizedGraph(n, { keptPtr: ptr, kept: idx, keptWeight: weight });
  return { n, ptr, idx: idx.slice(0, nnz), weight: weight.slice(0, nnz), vertexWeight: new Int32Array(n).fill(1) };
}
