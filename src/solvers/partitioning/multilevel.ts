/**
 * A multilevel graph partitioner (the TypeScript backend's; on the native backend the advisor also asks METIS,
 * ./metis.ts), in two schemes after Karypis and Kumar's:
 *  - recursive bisection: m parts by bisecting the graph, then each side, each bisection multilevel. Coarsen by
 *    heavy-edge matching (each vertex paired with the unmatched neighbour it shares the heaviest edge with, so heavy
 *    couplings end up inside one coarse vertex, never cut); bisect the coarsest graph by greedy growing from several
 *    seeds, keeping the grown prefix of least cut whose weight fits the balance; then on the way back,
 *    Fiduccia-Mattheyses (FM) passes move single vertices across the cut (best gain first, rolled back to the pass'
 *    best state) within the balance;
 *  - k-way (multilevelKway): coarsen the whole graph once, split the coarsest graph into m parts by recursive
 *    bisection, then on the way back k-way FM passes move boundary vertices between neighbouring parts.
 * The k-way scheme coarsens the graph once where recursive bisection coarsens every part again (log2 m times the
 * graph in all): at n = 10^6 it takes 3.6 s against 13.2 s, and cuts less (multilevelPartition says which runs where).
 *
 * Balance (options.imbalance = eps): every part holds between (1 - eps) n/m and (1 + eps) n/m rows,
 * widened to floor(n/m) and ceil(n/m) so contiguous sizes always fit. A bisection into k1 + k2
 * parts gives each side the sum of its parts' bounds, so every leaf of the recursion fits its own.
 */
import { SeededRandom } from '../random.js';
import type { WeightedGraph } from './rowGraph.js';

export interface PartitionOptions {
  /** eps: each machine holds between (1 - eps) n/m and (1 + eps) n/m rows (default 0.1). */
  imbalance?: number;
  /** Seed of the matchings' visiting order and the growing's seeds (default 1). */
  seed?: number;
}

export const DEFAULT_IMBALANCE = 0.1;

/** Stop coarsening at this many vertices, or when a level shrinks the graph by less than COARSEN_MIN_SHRINK. */
const COARSEST_VERTICES = 60;
const COARSEN_MIN_SHRINK = 0.9;
/** Seeds tried by the greedy growing on the coarsest graph. */
const GROWING_TRIES = 8;
/** FM passes per level, and the moves without improvement after which a pass stops. */
const FM_PASSES = 8;
const FM_PATIENCE = 64;

/** The rows a machine may hold: [lo, hi] ((1 -/+ eps) n/m for the imbalance eps, widened to floor/ceil(n/m)). */
export function machineSizeBounds(n: number, m: number, imbalance: number): { lo: number; hi: number } {
  const average = n / m;
  return {
    lo: Math.max(1, Math.min(Math.floor(average), Math.ceil((1 - imbalance) * average - 1e-9))),
    hi: Math.max(Math.ceil(average), Math.floor((1 + imbalance) * average + 1e-9)),
  };
}

/**
 * Independent multilevel runs (their own matchings and seeds); the one of least edge cut is kept. Above
 * ONE_RUN_VERTICES one run: on a large graph the runs' cuts differ by little. Poisson's row graph, runs against one
 * (edge cut, seconds): 250 x 250 in 36 parts 1910 in 4.1 s against 1872 in 0.43 s; 300 x 300 in 36 2247 in 5.5 s against
 * 2305 in 0.48 s (kappa(S) 1.059e7 against 1.057e7); below it, 200 x 200 in 20 1007 in 2.7 s against 1055 in 0.46 s
 * (kappa(S) 1.81e6 against 2.12e6).
 */
export const RUNS = 4;
export const ONE_RUN_VERTICES = 50_000;

/**
 * Vertices above which the runs are k-way only (recursive bisection's when every k-way run misses the balance). Best
 * of four runs of each (bench/multilevelSchemes.ts): above it k-way cut less in every case measured (recursive
 * bisection's cut 9-21% above on Poisson 150 x 150 and 200 x 200 in 16 to 100 parts, 12-18% on convection-diffusion
 * 150 x 150 in 4 to 16), and recursive bisection's runs took 40-57% of the partitioner's time; below it, on
 * ../shared/matrices, recursive bisection cut less in 6 of 29 cases (1138_bus in 16 parts: 39.3 against 47.8;
 * sherman5's k-way runs miss the balance).
 */
export const KWAY_ONLY_VERTICES = 10_000;

/**
 * Vertices from which a graph too dense for k-way passes (kwayRefinable: a dense matrix's row graph) gets one run of
 * recursive bisection, not RUNS: there the runs' edge cuts differ by ~0.1% and say nothing of kappa(S), which the
 * advisor ranks by. Dense Gaussian matrices (entries N(1, 1)), n = 1000 in 10, 2000 in 50 and 4000 in 10, three
 * streams each (bench/multilevelSchemes.ts --kappa): the least cut of four runs had a lower kappa(S) than the first
 * run in 3 of the 9, a higher one in 3, the same run in 3; the runs after the first cost ~0.2 s at n = 1000 and
 * ~0.65 s at 2000 in 50. Below it the runs take milliseconds (arc130: ~5 ms each).
 */
export const DENSE_ONE_RUN_VERTICES = 1000;

/**
 * The k-way scheme coarsens the whole graph until it has at most max(KWAY_VERTICES_PER_PART m, n / (20 log2 m))
 * vertices (METIS's CoarsenTo for its k-way partitioner), bisects that recursively (the initial partition: the best
 * of INITIAL_TRIES), then refines the m parts on the way back (refineKway, up to KWAY_PASSES FM passes per level).
 */
const KWAY_VERTICES_PER_PART = 30;
const INITIAL_TRIES = 4;
const KWAY_PASSES = 10;
/**
 * Moves a k-way FM pass makes past its best state before it stops. On Poisson n = 10^6 in 100 parts (edge cut,
 * seconds): 32 moves 16,371, 2.4 s; 128 16,057, 2.3 s; 512 15,247, 2.9 s; 2048 14,445, 3.6 s (METIS 14,692); 8192
 * 14,951, 4.8 s (bench/partitionerProfile.ts).
 */
const KWAY_PATIENCE = 2048;

/**
 * Average degree above which a graph gets no k-way FM (multilevelKway, refineKway): a move re-prices each neighbour at
 * the cost of its degree, so a pass costs about its moves times the degree squared. A dense matrix's complete row graph
 * took 44 s for one k-way run at n = 1000, against ~0.1 s on Poisson n = 40,000 (degree 12); its row graph now keeps
 * each row's heaviest couplings (./rowGraph.ts ROW_NEIGHBOURS), an average degree of 64 to 128.
 */
const KWAY_MAX_AVERAGE_DEGREE = 64;

/** Whether `g` is sparse enough for the k-way FM passes (KWAY_MAX_AVERAGE_DEGREE). */
export function kwayRefinable(g: WeightedGraph): boolean {
  return g.ptr[g.n] <= KWAY_MAX_AVERAGE_DEGREE * g.n;
}

/** The weight of the edges between parts. */
export function edgeCut(g: WeightedGraph, assignment: ArrayLike<number>): number {
  let cut = 0;
  for (let v = 0; v < g.n; v++)
    for (let p = g.ptr[v]; p < g.ptr[v + 1]; p++) if (assignment[v] !== assignment[g.idx[p]]) cut += g.weight[p];
  return cut / 2;
}

/**
 * assignment[v] = the part (0..m-1) of vertex v of `g`, every part within the balance, the least cut found: up to
 * KWAY_ONLY_VERTICES, RUNS runs of recursive bisection and then RUNS k-way runs (so never more cut than recursive
 * bisection alone); up to ONE_RUN_VERTICES, RUNS k-way runs (recursive bisection when all miss the balance); above
 * it, one k-way run (recursive bisection when its parts miss the balance). A graph denser than kwayRefinable allows
 * (a dense matrix's) is bisected recursively only, as before the k-way scheme: RUNS runs below DENSE_ONE_RUN_VERTICES,
 * one from it. Edge cuts, recursive bisection alone against four runs of each: Poisson 100 x 100 in 16 parts 452
 * against 426, 300 x 300 in 36 2485 against 2226 (one k-way run, as now: 2305); at n = 10^6 in 100, 16,378 in 13.2 s
 * against 14,445 in 3.6 s (METIS: 14,692 in 0.9 s; bench/partitionerProfile.ts).
 */
export function multilevelPartition(g: WeightedGraph, m: number, options: PartitionOptions = {}): Int32Array {
  const random = new SeededRandom(options.seed ?? 1);
  const { lo, hi } = machineSizeBounds(totalWeight(g), m, options.imbalance ?? DEFAULT_IMBALANCE);
  const kway = kwayRefinable(g);
  if (!kway && g.n >= DENSE_ONE_RUN_VERTICES) return recursiveBisection(g, m, lo, hi, random);
  if (g.n > ONE_RUN_VERTICES) return (kway ? multilevelKway(g, m, lo, hi, random) : null) ?? recursiveBisection(g, m, lo, hi, random);
  const bisections = !kway || g.n <= KWAY_ONLY_VERTICES;
  // Made one after the other as they are compared (the runs share the random stream).
  function* runs(): Generator<Int32Array | null> {
    for (let run = 0; bisections && run < RUNS; run++) yield recursiveBisection(g, m, lo, hi, random);
    for (let run = 0; kway && run < RUNS; run++) yield multilevelKway(g, m, lo, hi, random);
  }
  return leastCut(g, runs()) ?? recursiveBisection(g, m, lo, hi, random);
}

/** The assignment of least edge cut among `assignments` (the first on a tie; nulls skipped), or null if none. */
function leastCut(g: WeightedGraph, assignments: Iterable<Int32Array | null>): Int32Array | null {
  let best: Int32Array | null = null;
  let bestCut = Infinity;
  for (const assignment of assignments) {
    if (assignment === null) continue;
    const cut = edgeCut(g, assignment);
    if (cut < bestCut) {
      best = assignment;
      bestCut = cut;
    }
  }
  return best;
}

/**
 * One k-way run (KWAY_VERTICES_PER_PART above), or null when its coarsening stalls or its parts miss the balance (the
 * refinement could not even them out): the caller then bisects the graph itself recursively, which always meets it.
 */
export function multilevelKway(g: WeightedGraph, m: number, lo: number, hi: number, random: SeededRandom): Int32Array | null {
  if (m === 1) return new Int32Array(g.n);
  const coarsestVertices = Math.max(KWAY_VERTICES_PER_PART * m, Math.floor(g.n / (20 * Math.log2(m))));
  // A coarse vertex at most half the balance's slack: the initial partition can always even out its parts by one.
  const maxVertexWeight = Math.max(1, Math.floor((hi - lo) / 2));
  const levels: WeightedGraph[] = [g];
  const maps: Int32Array[] = [];
  while (levels[levels.length - 1].n > coarsestVertices) {
    const fine = levels[levels.length - 1];
    const { coarse, map } = coarsen(fine, maxVertexWeight, random, matchingOrder(fine.ptr, fine.n, random));
    if (coarse.n > COARSEN_MIN_SHRINK * fine.n) break;
    levels.push(coarse);
    maps.push(map);
  }
  const coarsest = levels[levels.length - 1];
  // Coarsening stalled (no slack in the balance: imbalance 0 leaves every vertex its own): bisect the graph itself.
  if (coarsest.n > 2 * coarsestVertices) return null;
  const tries = Array.from({ length: INITIAL_TRIES }, () => recursiveBisection(coarsest, m, lo, hi, random));
  let part = leastCut(coarsest, tries)!;
  refineKway(coarsest, part, m, lo, hi);
  for (let level = levels.length - 2; level >= 0; level--) {
    const map = maps[level];
    const fine = new Int32Array(levels[level].n);
    for (let v = 0; v < fine.length; v++) fine[v] = part[map[v]];
    part = fine;
    refineKway(levels[level], part, m, lo, hi);
  }
  return partWeights(g, part, m).every((w) => w >= lo && w <= hi) ? part : null;
}

/** The weight of each part's vertices. */
function partWeights(g: WeightedGraph, part: Int32Array, m: number): Float64Array {
  const weights = new Float64Array(m);
  for (let v = 0; v < g.n; v++) weights[part[v]] += g.vertexWeight[v];
  return weights;
}

/**
 * k-way Fiduccia-Mattheyses refinement in place. Each pass puts the boundary vertices in a heap by the gain (cut
 * decrease) of their best move: to the neighbouring part they are most joined to that has room, with both parts left
 * within [lo, hi]. It moves the vertex of largest gain, even a negative one (a way out of a local minimum), locks it,
 * re-prices its neighbours, stops after KWAY_PATIENCE moves without a better state, and rolls back to the pass' best
 * (least distance of the parts to [lo, hi], then least cut). A part outside [lo, hi] (the initial partition's coarse
 * vertices may not fit its bisections' windows exactly) is evened out first: a vertex of a part above hi may move to
 * any neighbouring part with room, one of a part that can spare it to a neighbouring part below lo, and such moves
 * come before any other. Passes until one finds no better state (at most KWAY_PASSES).
 */
export function refineKway(g: WeightedGraph, part: Int32Array, m: number, lo: number, hi: number): void {
  const { n, ptr, idx, weight, vertexWeight } = g;
  const partWeight = partWeights(g, part, m);
  const distance = (w: number): number => Math.max(0, lo - w, w - hi);
  let violation = 0;
  for (let b = 0; b < m; b++) violation += distance(partWeight[b]);
  // joined[b]: the weight of v's edges into part b; parts[0..touched): the parts v's edges reach.
  const joined = new Float64Array(m);
  const seen = new Uint8Array(m);
  const parts = new Int32Array(m);
  // A balancing move outranks every other: its gain is offset by BALANCING (above any cut in the graph).
  let totalEdgeWeight = 0;
  for (let p = 0; p < idx.length; p++) totalEdgeWeight += weight[p];
  const BALANCING = 2 * totalEdgeWeight + 1;
  let moveTarget = -1;
  /** v's best move (its target in moveTarget, -1: none; the gain returned, BALANCING added for a balancing move). */
  const bestMove = (v: number): number => {
    const a = part[v];
    let touched = 0;
    for (let p = ptr[v]; p < ptr[v + 1]; p++) {
      const b = part[idx[p]];
      if (seen[b] === 0) {
        seen[b] = 1;
        joined[b] = 0;
        parts[touched++] = b;
      }
      joined[b] += weight[p];
    }
    const own = seen[a] === 1 ? joined[a] : 0;
    const w = vertexWeight[v];
    const over = partWeight[a] > hi;
    moveTarget = -1;
    let best = -Infinity;
    if (partWeight[a] - w >= lo || over) {
      for (let k = 0; k < touched; k++) {
        const b = parts[k];
        if (b === a || partWeight[b] + w > hi) continue;
        const gain = joined[b] - own + (over || partWeight[b] < lo ? BALANCING : 0);
        if (gain > best || (gain === best && partWeight[b] < partWeight[moveTarget])) {
          best = gain;
          moveTarget = b;
        }
      }
    }
    for (let k = 0; k < touched; k++) seen[parts[k]] = 0;
    return best;
  };
  const locked = new Uint8Array(n);
  const movedFrom: number[] = [];
  const movedVertex: number[] = [];
  let cut = edgeCut(g, part);
  for (let pass = 0; pass < KWAY_PASSES; pass++) {
    locked.fill(0);
    const heap = new GainHeap();
    for (let v = 0; v < n; v++) {
      const a = part[v];
      for (let p = ptr[v]; p < ptr[v + 1]; p++)
        if (part[idx[p]] !== a) {
          const gain = bestMove(v);
          if (moveTarget >= 0) heap.push(gain, v);
          break;
        }
    }
    movedFrom.length = 0;
    movedVertex.length = 0;
    let bestViolation = violation;
    let bestCut = cut;
    let bestMoves = 0;
    while (movedVertex.length - bestMoves < KWAY_PATIENCE) {
      const entry = heap.pop();
      if (entry === null) break;
      const v = entry.vertex;
      if (locked[v] === 1) continue;
      const gain = bestMove(v);
      if (moveTarget < 0) continue;
      if (gain !== entry.gain) {
        // Stale: its neighbours moved since. Back in at its current gain.
        heap.push(gain, v);
        continue;
      }
      const a = part[v];
      const b = moveTarget;
      const w = vertexWeight[v];
      violation -= distance(partWeight[a]) + distance(partWeight[b]);
      partWeight[a] -= w;
      partWeight[b] += w;
      violation += distance(partWeight[a]) + distance(partWeight[b]);
      cut -= gain >= BALANCING / 2 ? gain - BALANCING : gain;
      part[v] = b;
      locked[v] = 1;
      movedFrom.push(a);
      movedVertex.push(v);
      for (let p = ptr[v]; p < ptr[v + 1]; p++) {
        const u = idx[p];
        if (locked[u] === 1) continue;
        const next = bestMove(u);
        if (moveTarget >= 0) heap.push(next, u);
      }
      // Cuts are sums of floats: a better state must gain more than their rounding.
      if (violation < bestViolation || (violation === bestViolation && cut < bestCut - 1e-12 * Math.max(1, bestCut))) {
        bestViolation = violation;
        bestCut = cut;
        bestMoves = movedVertex.length;
      }
    }
    for (let k = movedVertex.length - 1; k >= bestMoves; k--) {
      const v = movedVertex[k];
      const w = vertexWeight[v];
      partWeight[part[v]] -= w;
      partWeight[movedFrom[k]] += w;
      part[v] = movedFrom[k];
    }
    violation = bestViolation;
    cut = bestCut;
    if (bestMoves === 0) break;
  }
}

/**
 * Evens out in place the parts outside [lo, hi], no other move: what refineKway's balancing moves do, for a graph too
 * dense for its passes (kwayRefinable), and what they leave (they move only vertices with an edge to another part).
 * METIS bounds its heaviest part only, so a part may come back below lo. Each move is the one of least cut (the
 * vertex's edges into its new part less those into its old) among those that mend a part: into a part below lo from a
 * part above hi when there is one, else from any part that can spare a vertex; out of a part above hi into any part
 * with room. So a partition within [lo, hi] is left as it is. Unit vertex weights (a row graph), for which
 * lo <= n/m <= hi makes every step possible; there are as many moves as the parts' distance to [lo, hi], each
 * re-pricing the mover's neighbours (below). Vertices without edges move first, in one pass (moving one cuts nothing):
 * a tall regression's row graph, its dense columns left out (./rowGraph.ts), leaves most rows without edges (METIS's
 * parts of 200,000 such rows in 100 came back with up to 2,491 rows where 2,200 is the most).
 */
export function balanceParts(g: WeightedGraph, part: Int32Array, m: number, lo: number, hi: number): void {
  const { n, ptr, idx, weight, vertexWeight } = g;
  for (let v = 0; v < n; v++) if (vertexWeight[v] !== 1) throw new Error('balanceParts: vertex weights other than 1');
  const size = partWeights(g, part, m);
  moveEdgelessVertices(g, part, size, lo, hi);
  const joined = new Float64Array(m);
  // joined[b]: the weight of v's edges into part b.
  const join = (v: number): void => {
    joined.fill(0);
    for (let p = ptr[v]; p < ptr[v + 1]; p++) joined[part[idx[p]]] += weight[p];
  };
  let under = -1;
  let over = -1;
  const findOutside = (): void => {
    under = -1;
    over = -1;
    for (let b = 0; b < m; b++) {
      if (under < 0 && size[b] < lo) under = b;
      if (over < 0 && size[b] > hi) over = b;
    }
  };
  // A part below lo takes from the part above hi when there is one (a move that mends both), else from any part that
  // can spare a vertex; a part above hi gives to any part with room.
  const isSource = (a: number): boolean => (under >= 0 ? (over >= 0 ? a === over : a !== under && size[a] - 1 >= lo) : a === over);
  const isTarget = (b: number): boolean => (under >= 0 ? b === under : b !== over && size[b] + 1 <= hi);
  let moveTarget = -1;
  /** v's best move under the current (under, over): its value, the target in moveTarget (-1: v is no source). */
  const bestMove = (v: number): number => {
    moveTarget = -1;
    const a = part[v];
    if (!isSource(a)) return -Infinity;
    join(v);
    let best = -Infinity;
    for (let b = 0; b < m; b++) {
      if (!isTarget(b)) continue;
      const value = joined[b] - joined[a];
      if (value > best) [best, moveTarget] = [value, b];
    }
    return best;
  };
  // The greedy move of largest value, one at a time, each found through a heap of the sources' values instead of a pass
  // over every vertex (n m a move: 12 s for METIS's parts of a 200,000-row regression). Within one (under, over) the
  // targets only lose room, so a value rises only when a neighbour moves, and the neighbours of each move are pushed
  // again at their new values: the top entry whose value is still current is the best move. A new (under, over)
  // rebuilds the heap.
  for (findOutside(); under >= 0 || over >= 0;) {
    const [phaseUnder, phaseOver] = [under, over];
    const heap = new GainHeap();
    for (let v = 0; v < n; v++) {
      const value = bestMove(v);
      if (moveTarget >= 0) heap.push(value, v);
    }
    for (;;) {
      const entry = heap.pop();
      if (entry === null) throw new Error('balanceParts: no move mends the parts (lo <= n/m <= hi is required)');
      const v = entry.vertex;
      const value = bestMove(v);
      if (moveTarget < 0) continue;
      if (value !== entry.gain) {
        heap.push(value, v);
        continue;
      }
      size[part[v]]--;
      size[moveTarget]++;
      part[v] = moveTarget;
      findOutside();
      if (under !== phaseUnder || over !== phaseOver) break;
      for (let p = ptr[v]; p < ptr[v + 1]; p++) {
        const u = idx[p];
        const next = bestMove(u);
        if (moveTarget >= 0) heap.push(next, u);
      }
    }
  }
}

/**
 * balanceParts' first pass: each vertex without edges, from a part above hi (or, while a part is below lo, from one that
 * can spare it) into a part below lo, else the lightest with room. `size` follows the moves.
 */
function moveEdgelessVertices(g: WeightedGraph, part: Int32Array, size: Float64Array, lo: number, hi: number): void {
  const m = size.length;
  const outside = (): boolean => size.some((s) => s < lo || s > hi);
  if (!outside()) return;
  for (let v = 0; v < g.n; v++) {
    if (g.ptr[v] !== g.ptr[v + 1]) continue;
    const a = part[v];
    let under = -1;
    let lightest = -1;
    for (let b = 0; b < m; b++) {
      if (b === a) continue;
      if (under < 0 && size[b] < lo) under = b;
      if (size[b] + 1 <= hi && (lightest < 0 || size[b] < size[lightest])) lightest = b;
    }
    const target = size[a] > hi ? (under >= 0 ? under : lightest) : under >= 0 && size[a] - 1 >= lo ? under : -1;
    if (target < 0) continue;
    size[a]--;
    size[target]++;
    part[v] = target;
    if ((v & 1023) === 0 && !outside()) return;
  }
}

/** Recursive bisection of `g` into m parts of weights in [lo, hi] (each bisection multilevel, its own coarsening). */
export function recursiveBisection(g: WeightedGraph, m: number, lo: number, hi: number, random: SeededRandom): Int32Array {
  const assignment = new Int32Array(g.n);
  const all = new Int32Array(g.n);
  for (let v = 0; v < g.n; v++) all[v] = v;
  const split = (vertices: Int32Array, parts: number, first: number): void => {
    if (parts === 1) {
      for (const v of vertices) assignment[v] = first;
      return;
    }
    const k1 = Math.floor(parts / 2);
    const k2 = parts - k1;
    let s = 0;
    for (const v of vertices) s += g.vertexWeight[v];
    const low = Math.max(k1 * lo, s - k2 * hi);
    const high = Math.min(k1 * hi, s - k2 * lo);
    const sub = inducedSubgraph(g, vertices);
    const side = multilevelBisection(sub, low, high, Math.round((s * k1) / parts), random);
    const left: number[] = [];
    const right: number[] = [];
    for (let k = 0; k < vertices.length; k++) (side[k] === 0 ? left : right).push(vertices[k]);
    split(Int32Array.from(left), k1, first);
    split(Int32Array.from(right), k2, first + k1);
  };
  split(all, m, 0);
  return assignment;
}

/** The subgraph induced by `vertices` (its vertex k is vertices[k]). */
export function inducedSubgraph(g: WeightedGraph, vertices: Int32Array): WeightedGraph {
  const local = new Int32Array(g.n).fill(-1);
  for (let k = 0; k < vertices.length; k++) local[vertices[k]] = k;
  const ptr = new Int32Array(vertices.length + 1);
  for (let k = 0; k < vertices.length; k++) {
    const v = vertices[k];
    let count = 0;
    for (let p = g.ptr[v]; p < g.ptr[v + 1]; p++) if (local[g.idx[p]] >= 0) count++;
    ptr[k + 1] = ptr[k] + count;
  }
  const idx = new Int32Array(ptr[vertices.length]);
  const weight = new Float64Array(ptr[vertices.length]);
  const vertexWeight = new Int32Array(vertices.length);
  for (let k = 0; k < vertices.length; k++) {
    const v = vertices[k];
    vertexWeight[k] = g.vertexWeight[v];
    let q = ptr[k];
    for (let p = g.ptr[v]; p < g.ptr[v + 1]; p++) {
      const w = local[g.idx[p]];
      if (w < 0) continue;
      idx[q] = w;
      weight[q++] = g.weight[p];
    }
  }
  return { n: vertices.length, ptr, idx, weight, vertexWeight };
}

/**
 * The order the k-way run's coarsening visits vertices in, as METIS's heavy-edge matching has it: by increasing degree
 * (low-degree vertices have the fewest chances of a mate), ties in the order of a lightly shuffled identity (n/8
 * random swaps). A random permutation visits memory at random: at n = 10^6 each visit's adjacency and its
 * neighbours' marks are cache misses (the k-way run took 2.9 s so, 2.0 s in this order, for a like cut).
 */
function matchingOrder(ptr: Int32Array, n: number, random: SeededRandom): Int32Array {
  const shuffled = new Int32Array(n);
  for (let v = 0; v < n; v++) shuffled[v] = v;
  for (let k = 0; k < n >> 3; k++) {
    const a = random.nextInt(n);
    const b = random.nextInt(n);
    const t = shuffled[a];
    shuffled[a] = shuffled[b];
    shuffled[b] = t;
  }
  // A counting sort by degree, stable: ties keep the shuffled order.
  let maxDegree = 0;
  for (let v = 0; v < n; v++) maxDegree = Math.max(maxDegree, ptr[v + 1] - ptr[v]);
  const start = new Int32Array(maxDegree + 2);
  for (let v = 0; v < n; v++) start[ptr[v + 1] - ptr[v] + 1]++;
  for (let d = 0; d <= maxDegree; d++) start[d + 1] += start[d];
  const order = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const v = shuffled[k];
    order[start[ptr[v + 1] - ptr[v]]++] = v;
  }
  return order;
}

/** One level of heavy-edge matching, visiting the vertices in `order` (default: at random): the coarse graph and map[v] = the coarse vertex of v. */
export function coarsen(
  g: WeightedGraph,
  maxVertexWeight: number,
  random: SeededRandom,
  order: Int32Array = random.permutation(g.n),
): { coarse: WeightedGraph; map: Int32Array } {
  // g's arrays in locals: V8 reloads a property in a loop that stores to typed arrays.
  const { n, ptr: gPtr, idx: gIdx, weight: gWeight, vertexWeight: gVertexWeight } = g;
  const map = new Int32Array(n).fill(-1);
  let coarseN = 0;
  for (const v of order) {
    if (map[v] >= 0) continue;
    let mate = -1;
    let heaviest = -1;
    for (let p = gPtr[v]; p < gPtr[v + 1]; p++) {
      const w = gIdx[p];
      if (map[w] >= 0 || gVertexWeight[v] + gVertexWeight[w] > maxVertexWeight) continue;
      if (gWeight[p] > heaviest) {
        heaviest = gWeight[p];
        mate = w;
      }
    }
    map[v] = coarseN;
    if (mate >= 0) map[mate] = coarseN;
    coarseN++;
  }
  // The members of each coarse vertex, ascending (a counting sort of map), and its edges: typed arrays throughout,
  // at most the fine graph's edges (arrays of arrays and pushes were half the partitioner's time at 250,000 rows).
  const first = new Int32Array(coarseN + 1);
  for (let v = 0; v < n; v++) first[map[v] + 1]++;
  for (let c = 0; c < coarseN; c++) first[c + 1] += first[c];
  const members = new Int32Array(n);
  const fill = first.slice(0, coarseN);
  for (let v = 0; v < n; v++) members[fill[map[v]]++] = v;
  const vertexWeight = new Int32Array(coarseN);
  const ptr = new Int32Array(coarseN + 1);
  const idx = new Int32Array(gPtr[n]);
  const weight = new Float64Array(gPtr[n]);
  const slot = new Int32Array(coarseN).fill(-1);
  let edges = 0;
  for (let c = 0; c < coarseN; c++) {
    const start = edges;
    for (let k = first[c]; k < first[c + 1]; k++) {
      const v = members[k];
      vertexWeight[c] += gVertexWeight[v];
      for (let p = gPtr[v]; p < gPtr[v + 1]; p++) {
        const d = map[gIdx[p]];
        if (d === c) continue;
        if (slot[d] < start) {
          slot[d] = edges;
          idx[edges] = d;
          weight[edges++] = gWeight[p];
        } else weight[slot[d]] += gWeight[p];
      }
    }
    ptr[c + 1] = edges;
  }
  return { coarse: { n: coarseN, ptr, idx: idx.slice(0, edges), weight: weight.slice(0, edges), vertexWeight }, map };
}

const totalWeight = (g: WeightedGraph): number => g.vertexWeight.reduce((s, w) => s + w, 0);

/**
 * side[v] (0 or 1) for a bisection of `g` whose side 0 weighs in [low, high] (target: where the
 * growing aims when no cut-free prefix fits), least cut found.
 */
export function multilevelBisection(g: WeightedGraph, low: number, high: number, target: number, random: SeededRandom): Uint8Array {
  const levels: WeightedGraph[] = [g];
  const maps: Int32Array[] = [];
  // A coarse vertex heavier than the balance's slack could not be moved to fix it.
  const maxVertexWeight = Math.max(1, Math.floor((high - low) / 2), Math.ceil(totalWeight(g) / COARSEST_VERTICES));
  while (levels[levels.length - 1].n > COARSEST_VERTICES) {
    const fine = levels[levels.length - 1];
    const { coarse, map } = coarsen(fine, maxVertexWeight, random);
    if (coarse.n > COARSEN_MIN_SHRINK * fine.n) break;
    levels.push(coarse);
    maps.push(map);
  }
  let side = growBisection(levels[levels.length - 1], low, high, target, random);
  refineBisection(levels[levels.length - 1], side, low, high);
  for (let level = levels.length - 2; level >= 0; level--) {
    const map = maps[level];
    const fine = new Uint8Array(levels[level].n);
    for (let v = 0; v < fine.length; v++) fine[v] = side[map[v]];
    side = fine;
    refineBisection(levels[level], side, low, high);
  }
  return side;
}

/** How far side 0's weight is outside [low, high] (0 inside). */
const violation = (w: number, low: number, high: number): number => Math.max(0, low - w, w - high);

/**
 * Greedy graph growing: from a seed, add the frontier vertex that lowers the cut most (a new seed
 * when the frontier is empty: the component is done); of every prefix, keep the one of least cut
 * among those in [low, high] (ties: nearest the target). Best over GROWING_TRIES seeds.
 */
function growBisection(g: WeightedGraph, low: number, high: number, target: number, random: SeededRandom): Uint8Array {
  const n = g.n;
  let best: { side: Uint8Array; key: [number, number, number] } | null = null;
  for (let attempt = 0; attempt < Math.min(GROWING_TRIES, n); attempt++) {
    const inside = new Uint8Array(n);
    // toInside[v]: weight of v's edges into the grown set; degreeWeight[v]: all its edges.
    const toInside = new Float64Array(n);
    const degreeWeight = new Float64Array(n);
    for (let v = 0; v < n; v++) for (let p = g.ptr[v]; p < g.ptr[v + 1]; p++) degreeWeight[v] += g.weight[p];
    const order: number[] = [];
    let cut = 0;
    let weight = 0;
    let bestPrefix = 0;
    let bestKey: [number, number, number] = [violation(0, low, high), Infinity, Math.abs(target)];
    const frontier = new Set<number>();
    const seeds = random.permutation(n);
    let nextSeed = 0;
    while (order.length < n) {
      let pick = -1;
      let pickGain = -Infinity;
      for (const v of frontier) {
        const gain = 2 * toInside[v] - degreeWeight[v];
        if (gain > pickGain) {
          pickGain = gain;
          pick = v;
        }
      }
      if (pick < 0) {
        while (inside[seeds[nextSeed]]) nextSeed++;
        pick = seeds[nextSeed];
        pickGain = 2 * toInside[pick] - degreeWeight[pick];
      }
      frontier.delete(pick);
      inside[pick] = 1;
      order.push(pick);
      cut -= pickGain;
      weight += g.vertexWeight[pick];
      for (let p = g.ptr[pick]; p < g.ptr[pick + 1]; p++) {
        const w = g.idx[p];
        toInside[w] += g.weight[p];
        if (!inside[w]) frontier.add(w);
      }
      const key: [number, number, number] = [violation(weight, low, high), cut, Math.abs(weight - target)];
      if (lexLess(key, bestKey)) {
        bestKey = key;
        bestPrefix = order.length;
      }
      if (weight >= high && key[0] > 0) break;
    }
    const side = new Uint8Array(n).fill(1);
    for (let k = 0; k < bestPrefix; k++) side[order[k]] = 0;
    if (best === null || lexLess(bestKey, best.key)) best = { side, key: bestKey };
  }
  return best!.side;
}

function lexLess(a: readonly number[], b: readonly number[]): boolean {
  for (let k = 0; k < a.length; k++) {
    // Cut weights are sums of floats: equal within rounding counts as equal.
    if (Math.abs(a[k] - b[k]) > 1e-12 * Math.max(1, Math.abs(a[k]), Math.abs(b[k]))) return a[k] < b[k];
  }
  return false;
}

/**
 * A max-heap of (gain, vertex) with stale entries skipped on pop (their gain no longer current), in typed arrays that
 * double when full; sifts move a hole, which places entries as swapping would (the same order of pops, ties included).
 */
class GainHeap {
  private gains = new Float64Array(64);
  private vertices = new Int32Array(64);
  private size = 0;

  push(gain: number, vertex: number): void {
    if (this.size === this.gains.length) {
      const gains = new Float64Array(2 * this.size);
      gains.set(this.gains);
      this.gains = gains;
      const vertices = new Int32Array(2 * this.size);
      vertices.set(this.vertices);
      this.vertices = vertices;
    }
    const { gains, vertices } = this;
    let k = this.size++;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (gains[parent] >= gain) break;
      gains[k] = gains[parent];
      vertices[k] = vertices[parent];
      k = parent;
    }
    gains[k] = gain;
    vertices[k] = vertex;
  }

  pop(): { gain: number; vertex: number } | null {
    if (this.size === 0) return null;
    const { gains, vertices } = this;
    const top = { gain: gains[0], vertex: vertices[0] };
    const size = --this.size;
    if (size > 0) {
      const gain = gains[size];
      const vertex = vertices[size];
      let k = 0;
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let largest = k;
        let largestGain = gain;
        if (l < size && gains[l] > largestGain) {
          largest = l;
          largestGain = gains[l];
        }
        if (r < size && gains[r] > largestGain) largest = r;
        if (largest === k) break;
        gains[k] = gains[largest];
        vertices[k] = vertices[largest];
        k = largest;
      }
      gains[k] = gain;
      vertices[k] = vertex;
    }
    return top;
  }
}

/**
 * Fiduccia-Mattheyses passes on `side` in place: move the unlocked vertex of largest gain (cut
 * decrease) whose move keeps side 0's weight in [low, high] (or brings it closer when it is out),
 * lock it, and at the pass' end keep its best state (least violation, then least cut).
 */
export function refineBisection(g: WeightedGraph, side: Uint8Array, low: number, high: number): void {
  // g's arrays in locals, as in coarsen.
  const { n, ptr: gPtr, idx: gIdx, weight: gWeight, vertexWeight: gVertexWeight } = g;
  const external = new Float64Array(n);
  const internal = new Float64Array(n);
  let lightest = Infinity;
  for (let v = 0; v < n; v++) lightest = Math.min(lightest, gVertexWeight[v]);
  for (let pass = 0; pass < FM_PASSES; pass++) {
    external.fill(0);
    internal.fill(0);
    let weight0 = 0;
    let cut = 0;
    for (let v = 0; v < n; v++) {
      if (side[v] === 0) weight0 += gVertexWeight[v];
      for (let p = gPtr[v]; p < gPtr[v + 1]; p++) {
        if (side[gIdx[p]] === side[v]) internal[v] += gWeight[p];
        else external[v] += gWeight[p];
      }
      cut += external[v];
    }
    cut /= 2;
    // One heap per side: a side the balance closes to every vertex (each of weight >= the lightest) is not looked
    // at, where one heap made every step pop and push back the closed side's best entries (~480 a move on a dense
    // matrix's row graph at n = 4000, 2.3 s of the multilevel partitioner's 2.4 s).
    const heaps = [new GainHeap(), new GainHeap()];
    for (let v = 0; v < n; v++) heaps[side[v]].push(external[v] - internal[v], v);
    const locked = new Uint8Array(n);
    const moves: number[] = [];
    let bestKey: [number, number] = [violation(weight0, low, high), cut];
    let bestMoves = 0;
    let sinceBest = 0;
    // Entries whose move the balance forbids now (a heavier vertex than it allows), looked at again after the next move.
    const deferred: { gain: number; vertex: number }[] = [];
    const movedWeight = (v: number): number => (side[v] === 0 ? weight0 - gVertexWeight[v] : weight0 + gVertexWeight[v]);
    const movable = (moved: number): boolean => {
      const now = violation(weight0, low, high);
      const then = violation(moved, low, high);
      return !(then > now || (now === 0 && then > 0));
    };
    /** The side's best entry whose move the balance allows (popped), or null; stale and locked entries dropped. */
    const bestOf = (s: number): { gain: number; vertex: number } | null => {
      if (!movable(s === 0 ? weight0 - lightest : weight0 + lightest)) return null;
      for (;;) {
        const entry = heaps[s].pop();
        if (entry === null) return null;
        const v = entry.vertex;
        if (locked[v] || entry.gain !== external[v] - internal[v]) continue;
        if (movable(movedWeight(v))) return entry;
        deferred.push(entry);
      }
    };
    while (sinceBest < FM_PATIENCE) {
      const first = bestOf(0);
      const second = bestOf(1);
      if (first === null && second === null) break;
      if (deferred.length > n) break;
      const entry = second === null || (first !== null && first.gain >= second.gain) ? first! : second;
      const other = entry === first ? second : first;
      if (other !== null) heaps[side[other.vertex]].push(other.gain, other.vertex);
      const v = entry.vertex;
      const moved = movedWeight(v);
      for (const d of deferred) heaps[side[d.vertex]].push(d.gain, d.vertex);
      deferred.length = 0;
      locked[v] = 1;
      cut -= external[v] - internal[v];
      weight0 = moved;
      side[v] = 1 - side[v];
      [external[v], internal[v]] = [internal[v], external[v]];
      for (let p = gPtr[v]; p < gPtr[v + 1]; p++) {
        const w = gIdx[p];
        if (side[w] === side[v]) {
          internal[w] += gWeight[p];
          external[w] -= gWeight[p];
        } else {
          internal[w] -= gWeight[p];
          external[w] += gWeight[p];
        }
        if (!locked[w]) heaps[side[w]].push(external[w] - internal[w], w);
      }
      moves.push(v);
      const key: [number, number] = [violation(weight0, low, high), cut];
      if (lexLess(key, bestKey)) {
        bestKey = key;
        bestMoves = moves.length;
        sinceBest = 0;
      } else sinceBest++;
    }
    for (let k = moves.length - 1; k >= bestMoves; k--) side[moves[k]] = 1 - side[moves[k]];
    if (bestMoves === 0) break;
  }
}
