/**
 * The transient growth of the two-term gradient methods (D-HBM, D-NAG): how much an error mode can
 * grow before it decays, though the spectral radius rho is < 1.
 *
 * Per eigenvalue lambda of A^T A both iterations act on the mode's error through a 2 x 2 matrix; it
 * is not normal, and at the optimal parameters it has a repeated eigenvalue (a Jordan block), so the
 * error is (c1 + c2 t) r^t rather than c r^t. For heavy ball at lambda = L the double root is
 * r = -rho and, from z(0) = 0 (x(-1) = x(0)), e(t) = (1 + (1 + rho) t) (-rho)^t e(0): it peaks near
 * t* = 1/ln(1/rho) - 1/(1 + rho) at about (1 + rho) / (e ln(1/rho)) rho^(-1/(1+rho)) ~ 2 / (e (1 - rho))
 * ~ sqrt(kappa(A^T A)) / e times its start. (At lambda = mu, r = +rho gives (1 + (1 - rho) t) rho^t,
 * which never exceeds 1; D-NAG's double root at mu likewise: (1 + (1 - beta/rho) t) rho^t.)
 *
 * For any parameters this module follows the scalar recurrence of a handful of eigenvalues of
 * [mu, L] (both ends, and points spread linearly and geometrically between) from the method's start
 * and takes the largest |e(t) / e(0)|. The residual's modes are sigma_j e_j, so the largest growth
 * over the whole spectrum bounds the growth of |A x - b| / |b|; sampling the spectrum makes this an
 * estimate of that bound (the worst mode is an end of the interval at the optimal parameters), and
 * how much the residual actually grows depends on how much of it lies in those modes.
 */
export interface TransientPrediction {
  /** Largest predicted |e(t)| / |e(0)| over the sampled modes (>= 1). */
  factor: number;
  /** The iteration it is reached at. */
  iteration: number;
}

/** A method's modes: `start(lambda)` iterates one mode's error from e(0) = 1 (the method's own start); `key` names the method and its parameters. */
export interface ModeIteration {
  readonly key: string;
  start(lambda: number): { next(): number };
}

/** Points of [mu, L] followed, besides the two ends. */
const SAMPLES = 16;
/** Longest horizon followed per mode (iterations). */
const MAX_HORIZON = 2_000_000;

/**
 * The predictions made last, by method, parameters and spectrum: the columns of a block run (../runner/multipleRhs.ts)
 * each ask for the same one at their end, and near rho = 1 one costs ~0.5 s (32 modes over ~10^6 iterations each).
 */
const recent = new Map<string, TransientPrediction | null>();
const RECENT = 16;

/**
 * Largest growth of the sampled modes over the first ~3 / ln(1/rho) iterations (past the peak of a
 * double root, which is near 1 / ln(1/rho)); null when rho >= 1 (no transient: divergence).
 */
export function predictTransient(spectral: { mu: number; L: number }, rho: number, mode: ModeIteration): TransientPrediction | null {
  const key = `${mode.key} ${spectral.mu} ${spectral.L} ${rho}`;
  if (recent.has(key)) return recent.get(key)!;
  const prediction = followModes(spectral, rho, mode);
  if (recent.size >= RECENT) recent.delete(recent.keys().next().value!);
  recent.set(key, prediction);
  return prediction;
}

function followModes(spectral: { mu: number; L: number }, rho: number, mode: ModeIteration): TransientPrediction | null {
  if (!(rho < 1) || !(spectral.mu > 0) || !(spectral.L >= spectral.mu)) return null;
  const { mu, L } = spectral;
  const horizon = Math.min(MAX_HORIZON, Math.ceil(3 / -Math.log(Math.max(rho, Number.MIN_VALUE))) + 10);
  const lambdas = [mu, L];
  for (let k = 1; k < SAMPLES; k++) {
    lambdas.push(mu + ((L - mu) * k) / SAMPLES);
    lambdas.push(mu * Math.pow(L / mu, k / SAMPLES));
  }
  let factor = 1;
  let iteration = 0;
  for (const lambda of lambdas) {
    const run = mode.start(lambda);
    for (let t = 1; t <= horizon; t++) {
      const e = Math.abs(run.next());
      if (!Number.isFinite(e)) break;
      if (e > factor) {
        factor = e;
        iteration = t;
      }
    }
  }
  return { factor, iteration };
}

/** Heavy ball's mode: z <- beta z + lambda e; e <- e - alpha z, from e = 1, z = 0. */
export const heavyBallMode = (alpha: number, beta: number): ModeIteration => ({
  key: `heavy-ball ${alpha} ${beta}`,
  start(lambda) {
    let e = 1;
    let z = 0;
    return {
      next: () => {
        z = beta * z + lambda * e;
        e -= alpha * z;
        return e;
      },
    };
  },
});

/** Nesterov's mode: y' = (1 - alpha lambda) x; x <- y' + beta (y' - y); y <- y', from x = y = 1. */
export const nesterovMode = (alpha: number, beta: number): ModeIteration => ({
  key: `nesterov ${alpha} ${beta}`,
  start(lambda) {
    const q = 1 - alpha * lambda;
    let x = 1;
    let y = 1;
    return {
      next: () => {
        const yNext = q * x;
        x = yNext + beta * (yNext - y);
        y = yNext;
        return x;
      },
    };
  },
});
