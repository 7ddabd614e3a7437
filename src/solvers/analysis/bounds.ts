/**
 * The paper's bounds (SPEC "Bounds from the paper"), each reported with whether its hypothesis holds.
 * Pure arithmetic on the metrics: O(m + distinct block sizes).
 */
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../algorithms/registry.js';
import type { HeterogeneityForBounds, RateBounds } from '../algorithms/types.js';
import type { Bounds, Heterogeneity } from './types.js';

export interface BoundsInput {
  n: number;
  m: number;
  blockSizes: readonly number[];
  heterogeneity: Heterogeneity;
  /** null when not computed (a tall A, which Theorem 4 does not bound). */
  theorem4KappaALowerBound: number | null;
}

/**
 * Proposition 1 asks for theta_H = pi/2 exactly; computed angles of orthogonal subspaces carry
 * rounding of order n eps in their cosine. cos(theta_H) <= 1e-10 counts as orthogonal: then
 * Theorem 3 gives kappa(S) <= 1 + 2e-10 (m - 1), and APC's rate is below 1e-10, i.e. one step.
 */
export const PROPOSITION1_COS_TOLERANCE = 1e-10;

export function heterogeneityForBounds(m: number, h: Heterogeneity): HeterogeneityForBounds {
  return { m, thetaH: h.thetaH, cosThetaH: h.cosThetaH, phiMin: h.phiMin, rowNormRatio: h.rowNormRatio };
}

const finiteOrNull = (x: number | null): number | null => (x !== null && Number.isFinite(x) ? x : null);

export function computeBounds(input: BoundsInput): Bounds {
  const { n, m, blockSizes, heterogeneity: h } = input;
  const cos = Math.max(0, h.cosThetaH);
  const sinThetaH = Math.sin(h.thetaH);

  // Theorem 2 (independent of m): for a machine with p rows, with s = sqrt(p (n - p) cos theta_H)
  // and u = (n - p) cos theta_H, if 1 - s - u > 0 then kappa(S) <= (1 + s + u) / (1 - s - u).
  let theorem2: number | null = null;
  let theorem2P: number | null = null;
  for (const p of [...new Set(blockSizes)].sort((a, b) => a - b)) {
    const s = Math.sqrt(p * (n - p) * cos);
    const u = (n - p) * cos;
    const denominator = 1 - s - u;
    if (!(denominator > 0)) continue;
    const bound = (1 + s + u) / denominator;
    if (theorem2 === null || bound < theorem2) {
      theorem2 = bound;
      theorem2P = p;
    }
  }

  // Theorem 3 (independent of n): c = (m - 1) cos theta_H < 1 => kappa(S) <= (1 + c) / (1 - c).
  const c = (m - 1) * cos;
  const theorem3Holds = c < 1;

  const sinPhi = h.phiMin === null ? null : Math.sin(h.phiMin);
  const hb = heterogeneityForBounds(m, h);
  const table1: Partial<Record<AlgorithmId, RateBounds>> = {};
  for (const id of ALGORITHM_IDS) table1[id] = algorithms[id].rateBounds(hb);

  return {
    proposition1: { hypothesisHolds: cos <= PROPOSITION1_COS_TOLERANCE },
    // Proposition 2: kappa(S) >= 1 / sin^2(theta_H).
    proposition2KappaSLowerBound: finiteOrNull(1 / (sinThetaH * sinThetaH)),
    theorem2KappaSUpperBound: theorem2,
    theorem2: { hypothesisHolds: theorem2 !== null, p: theorem2P },
    theorem3KappaSUpperBound: theorem3Holds ? (1 + c) / (1 - c) : null,
    theorem3: { hypothesisHolds: theorem3Holds, c },
    theorem4KappaALowerBound: finiteOrNull(input.theorem4KappaALowerBound),
    // Theorem 4's consequences: kappa(A^T A) >= 1/sin^2(phi_min) and >= (max|a_k| / min|a_k|)^2.
    theorem4KappaAtALowerBounds: {
      phiMin: sinPhi === null ? null : finiteOrNull(1 / (sinPhi * sinPhi)),
      rowNormRatio: h.rowNormRatio * h.rowNormRatio,
    },
    table1,
  };
}
