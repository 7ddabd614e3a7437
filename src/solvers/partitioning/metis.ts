/**
 * The row graph's k-way partition by METIS (the native backend's graph partitioner; ./multilevel.ts is
 * the TypeScript backend's). METIS takes integer edge weights: the row graph's cosines in (0, 1] are
 * scaled to 1..WEIGHT_SCALE, so couplings that differ by less than 1/WEIGHT_SCALE look alike to it,
 * below the accuracy any partition's kappa(S) is sensitive to.
 */
import type { NativeMetis } from '../linalg/backend.js';
import type { WeightedGraph } from './rowGraph.js';

const WEIGHT_SCALE = 1000;
/**
 * The least imbalance METIS is asked for: it takes eps as its ufactor, 1000 eps in integers, and refuses 0 ("invalid
 * input": an advise job with imbalance 0 failed). Its parts are brought within the caller's bounds afterwards
 * (./advisor.ts polishedMetisPartition), which for eps = 0 are floor and ceil of n/m.
 */
const LEAST_METIS_IMBALANCE = 0.001;

/** assignment[v] = METIS's part (0..m-1) of row v; parts at most (1 + imbalance) n/m rows (METIS's balance, not the lower bound). */
export function metisPartition(metis: NativeMetis, g: WeightedGraph, m: number, imbalance: number, seed = 1): Int32Array {
  const weight = new Int32Array(g.weight.length);
  let largest = 0;
  for (const w of g.weight) largest = Math.max(largest, w);
  for (let p = 0; p < weight.length; p++) weight[p] = Math.max(1, Math.round((WEIGHT_SCALE * g.weight[p]) / (largest || 1)));
  return metis.metisPartGraphKway(g.ptr, g.idx, weight, m, Math.max(imbalance, LEAST_METIS_IMBALANCE), seed);
}
