/**
 * The simple candidates of the partition advisor beside contiguous blocks (../input/partition.ts's
 * contiguousAssignment, as `{ machines: m }`): round-robin (row k on machine k mod m), and contiguous blocks after the
 * reverse Cuthill-McKee order of the row graph, which numbers rows that share columns close to
 * each other: on a banded or mesh-like matrix whose rows were shuffled it recovers strips.
 */
import { contiguousAssignment } from '../input/partition.js';
import type { WeightedGraph } from './rowGraph.js';

export function roundRobinAssignment(n: number, m: number): Int32Array {
  const assignment = new Int32Array(n);
  for (let k = 0; k < n; k++) assignment[k] = k % m;
  return assignment;
}

/** Contiguous blocks of the rows taken in `order` (order[k] = the row placed k-th). */
export function contiguousInOrder(order: Int32Array, m: number): Int32Array {
  const blocks = contiguousAssignment(order.length, m);
  const assignment = new Int32Array(order.length);
  for (let k = 0; k < order.length; k++) assignment[order[k]] = blocks[k];
  return assignment;
}

/** Breadth-first levels from `start` within the unvisited vertices, neighbours by ascending degree; returns the visit order. */
function cuthillMcKeeFrom(g: WeightedGraph, start: number, visited: Uint8Array, out: Int32Array, at: number): number {
  const degree = (v: number) => g.ptr[v + 1] - g.ptr[v];
  let head = at;
  let tail = at;
  out[tail++] = start;
  visited[start] = 1;
  const next: number[] = [];
  while (head < tail) {
    const v = out[head++];
    next.length = 0;
    for (let p = g.ptr[v]; p < g.ptr[v + 1]; p++) {
      const w = g.idx[p];
      if (!visited[w]) {
        visited[w] = 1;
        next.push(w);
      }
    }
    next.sort((x, y) => degree(x) - degree(y) || x - y);
    for (const w of next) out[tail++] = w;
  }
  return tail;
}

/** The last vertex of a breadth-first search from `start` in its component (the farthest, smallest degree among the last level). */
function farthest(g: WeightedGraph, start: number, scratch: Uint8Array, order: Int32Array): { vertex: number; depth: number } {
  scratch.fill(0);
  const level = new Map<number, number>([[start, 0]]);
  let head = 0;
  let tail = 0;
  order[tail++] = start;
  scratch[start] = 1;
  let depth = 0;
  while (head < tail) {
    const v = order[head++];
    const d = level.get(v)!;
    depth = Math.max(depth, d);
    for (let p = g.ptr[v]; p < g.ptr[v + 1]; p++) {
      const w = g.idx[p];
      if (!scratch[w]) {
        scratch[w] = 1;
        level.set(w, d + 1);
        order[tail++] = w;
      }
    }
  }
  let vertex = start;
  for (let k = 0; k < tail; k++) {
    const v = order[k];
    if (level.get(v) !== depth) continue;
    const dv = g.ptr[v + 1] - g.ptr[v];
    if (vertex === start || dv < g.ptr[vertex + 1] - g.ptr[vertex]) vertex = v;
  }
  return { vertex, depth };
}

/**
 * Reverse Cuthill-McKee: each component from a pseudo-peripheral vertex (George and Liu's search:
 * restart from the farthest vertex while the eccentricity grows), the whole order reversed.
 * Returns order[k] = the row placed k-th.
 */
export function reverseCuthillMcKee(g: WeightedGraph): Int32Array {
  const n = g.n;
  const order = new Int32Array(n);
  const visited = new Uint8Array(n);
  const scratch = new Uint8Array(n);
  const bfs = new Int32Array(n);
  let filled = 0;
  for (let seed = 0; seed < n; seed++) {
    if (visited[seed]) continue;
    let start = seed;
    let { vertex, depth } = farthest(g, start, scratch, bfs);
    for (let tries = 0; tries < 8 && vertex !== start; tries++) {
      const further = farthest(g, vertex, scratch, bfs);
      if (further.depth <= depth) {
        start = vertex;
        break;
      }
      start = vertex;
      ({ vertex, depth } = further);
    }
    filled = cuthillMcKeeFrom(g, start, visited, order, filled);
  }
  return order.reverse();
}
