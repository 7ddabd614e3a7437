/**
 * APC or D-HBM? (SPEC "Recommendation"; paper Section V.)
 *  - Exact: rho_APC <= rho_D-HBM iff kappa(S) <= kappa(A^T A); the computed condition numbers decide.
 *    When they agree to KAPPA_TIE_RELATIVE the optimal rates are equal and D-HBM is named: its
 *    iteration is the cheaper one (one pass over the machines' rows, no per-machine copy of x).
 *  - Corollary 1, the paper's certificate that APC is faster:
 *    sin^2(phi_min) < (1 - c)/(1 + c), c = (m - 1) cos(theta_H); applicable when c < 1 and phi_min exists.
 *  - Predicted iterations to reduce the error by `tolerance`: ceil(ln(tol) / ln(rho)).
 *  - The paper's four regimes, with the thresholds in REGIME_THRESHOLDS.
 */
import { attainableAccuracy } from '../algorithms/common.js';
import { ALGORITHM_IDS, type AlgorithmId } from '../algorithms/registry.js';
import { InvalidParameterError } from '../errors.js';
import type { AlgorithmTuning, Conditioning, Heterogeneity, Recommendation, SufficientCondition } from './types.js';
import { closeToOneText, toleranceText } from '../numberText.js';

export interface RecommendationInput {
  m: number;
  heterogeneity: Heterogeneity;
  conditioning: Conditioning;
  rates: Record<AlgorithmId, AlgorithmTuning>;
  tolerance: number;
  /**
   * A tall system (more rows than unknowns): its machines' row spaces may intersect (theta_H = 0 then), and
   * Proposition 2 and Corollary 1 (through Theorem 4), stated for square systems, bound nothing there (Bounds.tall).
   */
  tall?: boolean;
}

/**
 * An angle (theta_H or phi_min) counts as large from pi/4 on. Why pi/4: it is where the paper's
 * lower bounds stop forcing ill-conditioning, 1/sin^2(pi/4) = 2 in Proposition 2 (kappa(S)) and
 * Theorem 4 (kappa(A^T A)); below it they grow like 1/angle^2. It is also the angle at which a
 * direction is as close to parallel as to orthogonal (cos = sin), and the same threshold for both
 * angles keeps the four cases symmetric.
 */
export const REGIME_THRESHOLDS = { thetaH: Math.PI / 4, phiMin: Math.PI / 4 } as const;

/** kappa(S) and kappa(A^T A) closer than this (relative) are equal to rounding: the rates tie. */
export const KAPPA_TIE_RELATIVE = 1e-9;

/**
 * How closely double precision resolves kappa(S) and kappa(A^T A) (relative): their smallest eigenvalues come from
 * sines of angles and singular values known to about eps |A|, so each is known to ~eps kappa(A) = eps sqrt(kappa)
 * relatively (A = J - 1e-12 I, n = 20: both are 4.0002e26 exactly, and were computed 3.9997e26 and 4.0081e26). Below
 * KAPPA_TIE_RELATIVE at kappa up to ~1e12.
 */
export function kappaResolution(kappaS: number, kappaAtA: number): number {
  return Math.max(KAPPA_TIE_RELATIVE, 4 * Number.EPSILON * Math.sqrt(Math.max(kappaS, kappaAtA)));
}

/**
 * The exact comparison: rho_APC <= rho_D-HBM iff kappa(S) <= kappa(A^T A). Equal to rounding
 * (KAPPA_TIE_RELATIVE) is a tie, and a tie names D-HBM (its iteration is the cheaper one). The
 * full analysis' recommendation and a study sample's cheap path (../studies/sampleMetrics.ts) both decide by it.
 */
export function fasterOfApcAndDhbm(kappaS: number, kappaAtA: number): { faster: 'apc' | 'dhbm'; tie: boolean } {
  const tie = Math.abs(kappaS - kappaAtA) <= kappaResolution(kappaS, kappaAtA) * Math.max(Math.abs(kappaS), Math.abs(kappaAtA));
  return { faster: tie ? 'dhbm' : kappaS < kappaAtA ? 'apc' : 'dhbm', tie };
}

/**
 * Iterations for the error to shrink by the factor `tolerance` at rate rho: ceil(ln tol / ln rho),
 * at least 1 when rho < 1 (rho = 0, or rho <= tol: one step suffices); 0 when tol >= 1; null when rho >= 1.
 * `gap`, 1 - rho without cancellation (../algorithms/types.ts OptimalTuning), gives ln rho = log1p(-gap) near 1:
 * ln of a rate rounded to double is off by up to eps / gap relatively (gap 2e-15: 5% fewer iterations than
 * log1p's), and a rate that rounds to 1 still counts (DGD at kappa(A^T A) = 2.6e26: 2.4e27 iterations, not "no
 * convergence").
 */
export function predictIterations(rate: number, tolerance: number, gap = 0): number | null {
  if (!(tolerance > 0) || !Number.isFinite(tolerance)) {
    throw new InvalidParameterError(`tolerance is ${String(tolerance)}; it must be a finite number > 0.`, { tolerance: String(tolerance) });
  }
  if (tolerance >= 1) return 0;
  if (rate === 1 && gap > 0) return Math.ceil(Math.log(tolerance) / Math.log1p(-gap));
  if (!Number.isFinite(rate) || rate >= 1) return null;
  const rho = Math.abs(rate);
  if (rho === 0) return 1;
  // Near 1 the gap holds the digits the rate lost (a gap that is not 1 - rho's, e.g. 0 when not known, is not used).
  const logRho = rho > 0.5 && gap > 0 && Math.abs(1 - gap - rho) <= 4 * Number.EPSILON ? Math.log1p(-gap) : Math.log(rho);
  return Math.max(1, Math.ceil(Math.log(tolerance) / logRho));
}

export function corollary1(m: number, h: Heterogeneity): SufficientCondition {
  const c = (m - 1) * Math.max(0, h.cosThetaH);
  const lhs = h.phiMin === null ? null : Math.sin(h.phiMin) ** 2;
  const rhs = c < 1 ? (1 - c) / (1 + c) : null;
  const applicable = lhs !== null && rhs !== null;
  return { applicable, holds: applicable && lhs < rhs, lhs, rhs };
}

type RegimeCase = 1 | 2 | 3 | 4 | null;

function regimeOf(h: Heterogeneity): { label: string; description: string; paperCase: RegimeCase } {
  const largeTheta = h.thetaH >= REGIME_THRESHOLDS.thetaH;
  if (h.phiMin === null) {
    return largeTheta
      ? {
          label: 'large theta_H, phi_min undefined (no Section V case)',
          description:
            'high cross-machine heterogeneity with no local angle to measure (every machine holds one row); Proposition 2 does not hold APC back, and D-HBM depends on kappa(A^T A) alone',
          paperCase: null,
        }
      : {
          label: 'small theta_H, phi_min undefined (no Section V case)',
          description:
            'low cross-machine heterogeneity with no local angle to measure (every machine holds one row); Proposition 2 forces kappa(S) >= 1/sin^2(theta_H), so APC is slow',
          paperCase: null,
        };
  }
  const largePhi = h.phiMin >= REGIME_THRESHOLDS.phiMin;
  if (largeTheta && !largePhi) {
    return {
      label: 'small phi_min, large theta_H (Section V, case 1)',
      description:
        'high cross-machine and low local heterogeneity (typical of machines exposed to different environments), where APC is likely to outperform D-HBM',
      paperCase: 1,
    };
  }
  if (!largeTheta && largePhi) {
    return {
      label: 'large phi_min, small theta_H (Section V, case 2)',
      description:
        'diverse local data that look alike across machines (federated-like), where APC slows down (Proposition 2) and D-HBM is slowed too when the row norms vary',
      paperCase: 2,
    };
  }
  if (!largeTheta && !largePhi) {
    return {
      label: 'small phi_min, small theta_H (Section V, case 3)',
      description:
        "low heterogeneity both across and within machines, where the paper's bounds (Proposition 2, Theorem 4) allow both methods to be slow and do not by themselves say which is faster",
      paperCase: 3,
    };
  }
  return {
    label: 'large phi_min, large theta_H (Section V, case 4)',
    description:
      'data diverse both across and within machines, where APC converges quickly and D-HBM may still be slowed by varying row norms',
    paperCase: 4,
  };
}

/**
 * The regime of a tall system: the paper's case by its angles, without what its propositions say of APC or D-HBM
 * ("APC slows down (Proposition 2)" read beside kappa(S) = 1 and APC exact at iteration 0 on a 2000 x 50 regression).
 */
function tallRegime(regime: ReturnType<typeof regimeOf>): ReturnType<typeof regimeOf> {
  return {
    ...regime,
    description:
      "a tall system, whose machines' row spaces may intersect (theta_H = 0 when two share a direction): Proposition 2 and " +
      "Theorem 4, stated for square systems, bound neither method here, and the paper's tendencies for this case need not hold",
  };
}

/**
 * A condition number or other positive quantity, 4 significant digits; one that would read 1 and is not is written
 * 1 + d or 1 - d (kappa(S) = 1.00002 read "kappa(S) = 1", which means APC is exact in one step).
 */
function num(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e4 || a < 1e-3) return x.toExponential(3);
  const rounded = Number(x.toPrecision(4));
  if (rounded === 1 && x !== 1) return closeToOneText(x, 3)!;
  return String(rounded);
}

/** A rate; rates close to 1 are written 1 - (1 - rho), from its gap (1 - rho without cancellation) when given. */
function rate(x: number, gap = 0): string {
  const near = closeToOneText(x, 2, gap);
  if (near !== null) return near;
  if (x >= 0 && x < 1e-3) return x.toExponential(2);
  return x.toPrecision(4);
}

/**
 * What the exact comparison predicts, said after the regime: the regime names the paper's tendency,
 * this the outcome on these data (so the regime never reads as undecided when the rates decide).
 */
function outcome(apc: number | null, dhbm: number | null, faster: 'apc' | 'dhbm', tie: boolean): string {
  if (tie) return 'here APC and D-HBM have the same optimal rate';
  if (apc === null && dhbm === null) return 'here neither APC nor D-HBM is predicted to converge';
  if (apc === null || dhbm === null) return `here only ${apc === null ? 'D-HBM' : 'APC'} is predicted to converge`;
  const [winner, loser, few, many] = faster === 'apc' ? ['APC', 'D-HBM', apc, dhbm] : ['D-HBM', 'APC', dhbm, apc];
  // Two significant digits: the counts themselves are in the explanation (and the ratio's last digits
  // would differ between the dense and sparse paths, whose rates agree to their error bounds only).
  const ratio = many / Math.max(1, few);
  if (ratio < 1.5) return `here ${winner} is faster than ${loser}, by less than a factor 1.5 in iterations`;
  return `here ${winner} is predicted to need about ${ratioText(ratio)} times fewer iterations than ${loser}`;
}

function ratioText(ratio: number): string {
  return ratio < 1e6 ? Number(ratio.toPrecision(2)).toLocaleString('en-US') : ratio.toExponential(1);
}

function iterations(k: number | null): string {
  if (k === null) return 'no convergence (rate >= 1)';
  const count = k < 1e9 ? `${k}` : k.toExponential(2);
  return `${count} ${k === 1 ? 'iteration' : 'iterations'}`;
}

/**
 * What the predicted iterations mean when `tolerance` is below the attainable accuracy eps kappa(A): plat362 (kappa(A)
 * = 2.2e11) was predicted 1.4e12 APC iterations to 1e-8, below its 4.8e-5. Empty otherwise.
 */
export function unattainableSentence(tolerance: number, attainable: number): string {
  if (!(tolerance < attainable) || !Number.isFinite(attainable)) return '';
  return (
    `The tolerance ${toleranceText(tolerance)} is below the attainable accuracy eps kappa(A) = ${num(attainable)}: in double ` +
    "precision a run's residual may stop falling near it (the run then ends stagnated) rather than reach the tolerance, " +
    "so the predicted iterations and times are exact arithmetic's: they compare speeds, not when a run gets there."
  );
}

/** c = (m - 1) cos(theta_H), whose distance to 1 is what matters. */
function nearOne(c: number): string {
  return closeToOneText(c) ?? num(c);
}

export function recommend(input: RecommendationInput): Recommendation {
  const { m, heterogeneity: h, conditioning, rates, tolerance } = input;
  const { kappaS, kappaAtA } = conditioning;
  const apcRate = rates.apc.rate;
  const dhbmRate = rates.dhbm.rate;

  const { faster, tie } = fasterOfApcAndDhbm(kappaS, kappaAtA);

  const predictedIterations: Partial<Record<AlgorithmId, number | null>> = {};
  for (const id of ALGORITHM_IDS)
    if (rates[id] !== undefined) predictedIterations[id] = predictIterations(rates[id].rate, tolerance, rates[id].gap);

  const { tall = false } = input;
  // Corollary 1 rests on Theorem 4, which a tall A breaks (rows e1, e1, e2, e2: kappa(A) = 1, the bound infinite).
  const sufficientCondition = tall ? { ...corollary1(m, h), applicable: false, holds: false } : corollary1(m, h);
  const regime = tall ? tallRegime(regimeOf(h)) : regimeOf(h);
  const c = (m - 1) * Math.max(0, h.cosThetaH);

  const apcText = rate(apcRate, rates.apc.gap);
  const dhbmText = rate(dhbmRate, rates.dhbm.gap);
  const resolution = kappaResolution(kappaS, kappaAtA);
  const agree =
    resolution > KAPPA_TIE_RELATIVE
      ? `agree within what double precision resolves at these condition numbers (relative ${resolution.toExponential(1)}, about eps kappa(A))`
      : 'agree to rounding';
  const verdict = tie
    ? `APC and D-HBM have the same optimal rate here: kappa(S) = ${num(kappaS)} and kappa(A^T A) = ${num(kappaAtA)} ${agree}, so rho_APC = ${apcText} and rho_D-HBM = ${dhbmText} coincide; D-HBM is named because its iteration is the cheaper one.`
    : faster === 'apc'
      ? `APC is recommended: kappa(S) = ${num(kappaS)} is smaller than kappa(A^T A) = ${num(kappaAtA)}, so APC's optimal rate rho_APC = ${apcText} beats D-HBM's rho_D-HBM = ${dhbmText} (rho_APC <= rho_D-HBM exactly when kappa(S) <= kappa(A^T A)).`
      : `D-HBM is recommended: kappa(A^T A) = ${num(kappaAtA)} is smaller than kappa(S) = ${num(kappaS)}, so D-HBM's optimal rate rho_D-HBM = ${dhbmText} beats APC's rho_APC = ${apcText} (rho_APC <= rho_D-HBM exactly when kappa(S) <= kappa(A^T A)).`;
  const cost = `Reducing the error by a factor ${toleranceText(tolerance)} takes about ${iterations(predictedIterations.apc ?? null)} of APC and ${iterations(predictedIterations.dhbm ?? null)} of D-HBM.`;
  const attainable = attainableAccuracy(conditioning.L / conditioning.mu);

  let certificate: string;
  const sc = sufficientCondition;
  if (sc.applicable && sc.holds) {
    certificate = `The paper's sufficient condition (Corollary 1) holds: sin^2(phi_min) = ${num(sc.lhs as number)} < (1 - c)/(1 + c) = ${num(sc.rhs as number)} with c = (m - 1) cos(theta_H) = ${nearOne(c)}, which certifies that APC is faster from the angles alone.`;
  } else if (sc.applicable) {
    certificate = `The paper's sufficient condition (Corollary 1) applies but does not hold: sin^2(phi_min) = ${num(sc.lhs as number)} is not below (1 - c)/(1 + c) = ${num(sc.rhs as number)} (c = (m - 1) cos(theta_H) = ${nearOne(c)}), so it certifies nothing and the exact comparison decides.`;
  } else if (tall) {
    certificate =
      "The paper's sufficient condition (Corollary 1) does not apply to a tall system (it rests on Theorem 4, stated for square ones); the exact comparison decides.";
  } else {
    const reasons: string[] = [];
    if (sc.rhs === null) reasons.push(`c = (m - 1) cos(theta_H) = ${nearOne(c)} is not below 1 (as on most real data)`);
    if (sc.lhs === null) reasons.push('phi_min is undefined (every machine holds a single row)');
    certificate = `The paper's sufficient condition (Corollary 1) does not apply because ${reasons.join(' and ')}; the exact comparison decides.`;
  }
  const angles = h.phiMin === null ? `theta_H = ${num(h.thetaH)} rad` : `theta_H = ${num(h.thetaH)} rad, phi_min = ${num(h.phiMin)} rad`;
  const regimeSentence = `In the paper's terms the data have ${regime.label}: ${regime.description} (${angles}; an angle counts as large from pi/4).`;

  return {
    algorithm: faster,
    sufficientCondition,
    exact: { apcRate, dhbmRate, kappaS, kappaAtA, faster, tie },
    predictedIterations,
    tolerance,
    regime: `${regime.label}: ${regime.description}; ${outcome(predictedIterations.apc ?? null, predictedIterations.dhbm ?? null, faster, tie)}`,
    regimeThresholds: { thetaH: REGIME_THRESHOLDS.thetaH, phiMin: REGIME_THRESHOLDS.phiMin },
    attainableAccuracy: Number.isFinite(attainable) ? attainable : null,
    explanation: [verdict, cost, unattainableSentence(tolerance, attainable), certificate, regimeSentence]
      .filter((text) => text !== '')
      .join(' '),
  };
}
