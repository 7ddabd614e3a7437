/**
 * Monte-Carlo summaries of a sample of values: mean, standard error, 95% interval, extremes,
 * histogram (empirical density) and exceedance probabilities; and the closed forms the studies put
 * beside them (the regularized incomplete beta function, for cos^2 theta ~ Beta(1/2, (n-1)/2)).
 */

/** Two-sided 95% normal quantile: the interval is mean +- 1.96 SE (the normal approximation, fine from ~30 samples). */
export const Z_95 = 1.959963984540054;

export interface Summary {
  /** Values summarized (kept samples whose value is defined). */
  count: number;
  mean: number | null;
  /** Sample standard deviation / sqrt(count); null below two values. */
  standardError: number | null;
  /** mean -+ 1.96 standard errors. */
  interval: [number, number] | null;
  min: number | null;
  max: number | null;
}

/** Summary of the finite values of `values` (NaN marks a sample without a value). */
export function summarize(values: ArrayLike<number>): Summary {
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    if (!Number.isFinite(v)) continue;
    count++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (count === 0) return { count, mean: null, standardError: null, interval: null, min: null, max: null };
  const mean = sum / count;
  let squares = 0;
  for (let k = 0; k < values.length; k++) if (Number.isFinite(values[k])) squares += (values[k] - mean) ** 2;
  const standardError = count > 1 ? Math.sqrt(squares / (count - 1) / count) : null;
  const interval: [number, number] | null = standardError === null ? null : [mean - Z_95 * standardError, mean + Z_95 * standardError];
  return { count, mean, standardError, interval, min, max };
}

/** Equal-width bins from 0 (or the least value when negative), or equal-ratio bins from the positive values' 1st percentile. */
export type HistogramScale = 'linear' | 'log';

export interface Histogram {
  /**
   * bins + 1 edges, up to the 99th percentile (the heavy tail of tan^-2 would flatten the rest); on the log scale from the
   * positive values' 1st percentile.
   */
  edges: number[];
  /**
   * Empirical density of each bin (count / (total * width), per unit of the value on either scale); values above the last
   * edge are counted in `above`, those below the first (values <= 0 on the log scale) in `below`.
   */
  density: number[];
  above: number;
  below: number;
  /** How the edges are spaced: `log` when equal ratios were asked for and the values had a positive range. */
  scale: HistogramScale;
}

export function histogram(values: ArrayLike<number>, bins: number, scale: HistogramScale = 'linear'): Histogram | null {
  const finite = Array.from(values)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (finite.length === 0 || bins < 1) return null;
  const high = finite[Math.min(finite.length - 1, Math.floor(0.99 * finite.length))];
  // Equal ratios for a metric spread over decades (tan^-2 theta at n = 256 had most of its samples in the first of 40
  // equal widths), from the positive values' 1st percentile as equal widths end at the 99th: the least value alone
  // (8.7e-9 among 120 samples between 1e-4 and 0.6) spread the bins over decades nearly empty. Without a positive
  // range, equal widths.
  const positives = finite.filter((v) => v > 0);
  const positive = positives.length > 0 ? positives[Math.floor(0.01 * positives.length)] : undefined;
  const logBins = scale === 'log' && positive !== undefined && high > positive;
  const edges = logBins
    ? Array.from({ length: bins + 1 }, (_, k) => (k === bins ? high : positive * (high / positive) ** (k / bins)))
    : linearEdges(Math.min(0, finite[0]), high, bins);
  const counts = new Array<number>(bins).fill(0);
  let above = 0;
  let below = 0;
  for (const v of finite) {
    if (v > edges[bins]) above++;
    else if (v < edges[0]) below++;
    else counts[binOf(edges, v)]++;
  }
  return {
    edges,
    density: counts.map((c, k) => c / (finite.length * (edges[k + 1] - edges[k]))),
    above,
    below,
    scale: logBins ? 'log' : 'linear',
  };
}

function linearEdges(low: number, high: number, bins: number): number[] {
  const width = high > low ? (high - low) / bins : 1;
  return Array.from({ length: bins + 1 }, (_, k) => low + k * width);
}

/** The bin [edges[k], edges[k + 1]) holding v (the last bin closed), by bisection. */
function binOf(edges: number[], v: number): number {
  let lo = 0;
  let hi = edges.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (edges[mid] <= v) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface Exceedance {
  eps: number;
  /** Share of the values above eps; null when there is no value (the metric never defined). */
  probability: number | null;
  /** sqrt(P (1 - P) / count); null with the probability. 0 at P = 0 or 1, which `interval` is not. */
  standardError: number | null;
  /**
   * The probability's 95% interval (Wilson's score interval): at P = 0 in N samples [0, ~3.84 / N], not 0 ± 0 (Experiment 3
   * read 31 of its 100 estimates as certain); null with the probability.
   */
  interval: [number, number] | null;
  /** The exact probability where a closed form exists (see StudyResult), else null. */
  closedForm: number | null;
}

export function exceedance(values: ArrayLike<number>, eps: number): Omit<Exceedance, 'closedForm'> {
  let count = 0;
  let above = 0;
  for (let k = 0; k < values.length; k++) {
    if (!Number.isFinite(values[k])) continue;
    count++;
    if (values[k] > eps) above++;
  }
  // No value at all (a bound that never applies): no probability, not 0 (it read "never exceeded").
  if (count === 0) return { eps, probability: null, standardError: null, interval: null };
  const probability = above / count;
  return { eps, probability, standardError: Math.sqrt((probability * (1 - probability)) / count), interval: wilsonInterval(above, count) };
}

/** Wilson's score interval at 95% for `above` successes in `count` trials (count > 0). */
export function wilsonInterval(above: number, count: number): [number, number] {
  const p = above / count;
  const z2 = Z_95 * Z_95;
  const scale = 1 + z2 / count;
  const centre = (p + z2 / (2 * count)) / scale;
  const half = (Z_95 / scale) * Math.sqrt((p * (1 - p)) / count + z2 / (4 * count * count));
  // At the ends the interval closes on them exactly (rounding would leave 1e-17).
  return [above === 0 ? 0 : Math.max(0, centre - half), above === count ? 1 : Math.min(1, centre + half)];
}

/** ln Gamma(x), x > 0 (Lanczos, g = 7, 9 terms: ~1e-15 relative). */
export function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0];
  const t = z + 7.5;
  for (let k = 1; k < 9; k++) a += c[k] / (z + k);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b) = P(X <= x) for X ~ Beta(a, b). */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/**
 * One-dimensional subspaces (p = 1) of R^n, independent and uniform: cos^2 theta ~ Beta(1/2, (n-1)/2),
 * so P(tan^-2 theta > eps) = P(cos^2 theta > eps / (1 + eps)) = 1 - I_{eps/(1+eps)}(1/2, (n-1)/2)
 * = I_{1/(1+eps)}((n-1)/2, 1/2) by the symmetry I_x(a, b) = 1 - I_{1-x}(b, a): the upper tail computed as itself, not
 * as 1 minus a value near 1 (n = 256, eps = 0.5 read 0 for 3.03e-24; n = 128 lost 4 digits).
 */
export function lineAngleExceedance(n: number, eps: number): number {
  return regularizedBeta(1 / (1 + eps), (n - 1) / 2, 0.5);
}

/** E[tan^-2 theta] = E[c / (1 - c)] for c ~ Beta(1/2, (n-1)/2): (1/2) / ((n-1)/2 - 1) = 1 / (n - 3), finite for n > 3. */
export function lineAngleTanInvSqMean(n: number): number | null {
  return n > 3 ? 1 / (n - 3) : null;
}
