/**
 * The stopping rules of a run (tolerances, caps, divergence), one case producing each status the runner can end with
 * (converged by each test, max-iterations, max-wall-time, diverged, stagnated, non-finite), and the
 * diagnosis of a residual that grew: D-HBM's transient at its optimal parameters (predicted, and not
 * taken for divergence at the default divergenceTolerance) apart from a spectral radius above 1.
 */
import { describe, expect, it } from 'vitest';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { buildDistributedSystem, type DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { CancelledError, InvalidParameterError } from '../../../src/solvers/errors.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { fromRows, relativeResidual } from '../../../src/solvers/matrix.js';
import {
  DEFAULT_DIVERGENCE_TOLERANCE,
  recomputedResidualSentence,
  runAlgorithm,
  runAlgorithmWork,
} from '../../../src/solvers/runner/runAlgorithm.js';
import { RUN_STATUSES, type RunResult, type RunStatus } from '../../../src/solvers/runner/types.js';
import { wellConditionedSystem } from '../parallel/support.js';
import { readMatrixCsr } from '../sparse/support.js';

const well = wellConditionedSystem(24, 3, 7); // kappa ~ 2, b = A 1

/**
 * diag(sigma), sigma_j spread geometrically over [1, 1e3], b = A 1: the residual sits mostly in the
 * top singular direction, where heavy ball's double root -rho makes the error grow ~ kappa(A) / e
 * before it falls. kappa(A^T A) = 1e6, rho ~ 1 - 2e-3.
 */
function stiffDiagonal(): { system: DistributedSystem; spectral: SpectralData } {
  const n = 16;
  const rows = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? Math.pow(1e3, i / (n - 1)) : 0)));
  const system = buildDistributedSystem(createProblem({ A: fromRows(rows), partition: { machines: 4 } }));
  return { system, spectral: spectralDataOf(analyze(system)) };
}

const reached = new Set<RunStatus>();

describe('stopping rules: each status', () => {
  it('converged by the relative residual, by absoluteTolerance, and only once errorTolerance holds too', () => {
    const { system, spectral } = well;
    const relative = runAlgorithm(system, 'cimmino', spectral, { tolerance: 1e-8, maxIterations: 10_000 });
    expect(relative.status).toBe('converged');
    reached.add(relative.status);
    // |b| = |A 1| > 1: an absolute tolerance of 1e-4 is met before the relative 1e-300.
    const absolute = runAlgorithm(system, 'cimmino', spectral, { tolerance: 1e-300, absoluteTolerance: 1e-4, maxIterations: 10_000 });
    expect(absolute.status).toBe('converged');
    expect(absolute.stopReason).toMatch(/absoluteTolerance/);
    expect(absolute.iterations).toBeLessThan(relative.iterations);
    const withError = runAlgorithm(system, 'cimmino', spectral, { tolerance: 1e-2, errorTolerance: 1e-10, maxIterations: 10_000 });
    expect(withError.status).toBe('converged');
    expect(withError.relativeError as number).toBeLessThanOrEqual(1e-10);
    expect(withError.stopReason).toMatch(/errorTolerance/);
  });

  it('errorTolerance without a known solution is refused', () => {
    const { A } = well.system;
    const rhs = Float64Array.from({ length: A.rows }, (_, i) => Math.cos(i));
    const system = buildDistributedSystem(createProblem({ A, rhs, partition: { machines: 3 } }));
    expect(() => runAlgorithm(system, 'dgd', well.spectral, { tolerance: 1e-8, errorTolerance: 1e-8, maxIterations: 10 })).toThrow(
      InvalidParameterError,
    );
  });

  it('max-iterations', () => {
    const r = runAlgorithm(well.system, 'dgd', well.spectral, { tolerance: 1e-14, maxIterations: 3 });
    expect(r.status).toBe('max-iterations');
    reached.add(r.status);
  });

  it('says a relative residual that has barely moved as 1 - d, not 1.000e+0 (max-iterations and cancelled alike)', () => {
    // A step 1e-6 of the optimal one: after 3 iterations the residual is 1 - O(1e-6).
    const alpha = 1e-6 / well.spectral.L;
    const capped = runAlgorithm(well.system, 'dgd', well.spectral, { tolerance: 1e-8, maxIterations: 3, parameters: { alpha } });
    expect(capped.relativeResidual).toBeGreaterThan(0.999);
    expect(capped.relativeResidual).toBeLessThan(1);
    expect(capped.stopReason).toContain(`relative residual 1 - ${(1 - capped.relativeResidual).toExponential(3)} > tolerance`);
    expect(capped.stopReason).not.toContain('1.000e+0');
    // Cancelled at a yield after a few iterations, as a job's cancel reaches a run.
    const work = runAlgorithmWork(well.system, 'dgd', well.spectral, { tolerance: 1e-8, maxIterations: 1000, parameters: { alpha } });
    for (let step = 0; step < 5; step++) work.next();
    const end = work.throw(new CancelledError());
    expect(end.done).toBe(true);
    const cancelled = end.value as RunResult;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.iterations).toBeGreaterThan(0);
    expect(cancelled.stopReason).toContain(`relative residual 1 - ${(1 - cancelled.relativeResidual).toExponential(3)}.`);
    expect(cancelled.stopReason).not.toContain('1.000e+0');
  });

  it('max-wall-time: a tiny limit is reached before the tolerance', () => {
    const r = runAlgorithm(well.system, 'apc', well.spectral, { tolerance: 1e-300, maxIterations: 1_000_000, maxWallTimeMs: 1e-6 });
    expect(r.status).toBe('max-wall-time');
    expect(r.stopReason).toMatch(/maxWallTimeMs/);
    reached.add(r.status);
  });

  it('diverged: the residual past divergenceTolerance times its initial value', () => {
    const { system, spectral } = well;
    const r = runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-8, maxIterations: 100_000, parameters: { alpha: 2.5 / spectral.L } });
    expect(r.status).toBe('diverged');
    const last = r.trace.relativeResidual[r.trace.relativeResidual.length - 1];
    expect(last).toBeGreaterThan(DEFAULT_DIVERGENCE_TOLERANCE * r.trace.relativeResidual[0]);
    // The spectral radius is > 1 for these parameters: true divergence, said so.
    expect(r.growth?.cause).toBe('divergence');
    expect(r.stopReason).toMatch(/true divergence/);
    const early = runAlgorithm(system, 'dgd', spectral, {
      tolerance: 1e-8,
      maxIterations: 100_000,
      parameters: { alpha: 2.5 / spectral.L },
      divergenceTolerance: 10,
    });
    expect(early.status).toBe('diverged');
    expect(early.iterations).toBeLessThan(r.iterations);
    reached.add(r.status);
  });

  it('non-finite: a step so large that the estimate overflows', () => {
    const r = runAlgorithm(well.system, 'dgd', well.spectral, { tolerance: 1e-8, maxIterations: 100, parameters: { alpha: 1e308 } });
    expect(r.status).toBe('non-finite');
    expect(r.stopReason).toMatch(/^Non-finite values at iteration 1: the relative residual became (Infinity|NaN)/);
    reached.add(r.status);
    // A step of 1e300 leaves x finite (~1e302): its residual's square overflows, measured scaled it is what it is.
    const large = runAlgorithm(well.system, 'dgd', well.spectral, { tolerance: 1e-8, maxIterations: 100, parameters: { alpha: 1e300 } });
    expect(large.status).toBe('diverged');
    expect(large.relativeResidual).toBeGreaterThan(1e300);
    expect(large.stopReason).toContain(`the relative residual ${large.relativeResidual.toExponential(3)} exceeds divergenceTolerance`);
    // D-HBM's spectral radius at alpha = 1e300 is ~alpha L (the root |1 + beta - alpha L| of its quadratic): finite, though
    // its discriminant's square overflows; it read Infinity.
    const momentum = runAlgorithm(well.system, 'dhbm', well.spectral, {
      tolerance: 1e-8,
      maxIterations: 100,
      parameters: { alpha: 1e300, beta: 0.001 },
    });
    expect(momentum.status).toBe('diverged');
    expect(Math.abs(momentum.theoreticalRate / (1e300 * well.spectral.L) - 1)).toBeLessThan(1e-12);
    expect(momentum.stopReason).toMatch(
      /true divergence, the spectral radius of the iteration for these parameters is 4\.\d{3}e\+302 >= 1\.$/,
    );
    // APC at gamma = eta = 1e300: (1 - gamma)(1 - eta) overflows, and so does the radius (>= sqrt of it). Said so, once,
    // where it read "NaN >= 1".
    for (const eta of [1e300, 1]) {
      const apc = runAlgorithm(well.system, 'apc', well.spectral, {
        tolerance: 1e-8,
        maxIterations: 100,
        parameters: { gamma: 1e300, eta },
      });
      expect(apc.status).toBe('non-finite');
      expect(apc.stopReason).not.toMatch(/NaN >= 1|Infinity >= 1/);
      expect(apc.stopReason.match(/spectral radius/g)).toHaveLength(1);
      if (eta === 1e300) {
        expect(apc.theoreticalRate).toBe(Infinity);
        expect(apc.stopReason).toContain(
          'The spectral radius of the iteration for these parameters is too large to compute in double precision (far above 1).',
        );
      } else expect(apc.stopReason).toContain('is 1.000e+300 >= 1.');
    }
  });

  it('stagnated: a tolerance below eps kappa(A) ends near the attainable accuracy, which the run reports', () => {
    const r = runAlgorithm(well.system, 'cimmino', well.spectral, { tolerance: 1e-30, maxIterations: 1_000_000 });
    expect(r.status, r.stopReason).toBe('stagnated');
    expect(r.attainableAccuracy).toBeGreaterThan(Number.EPSILON);
    expect(r.attainableAccuracy).toBeLessThan(1e-13);
    expect(r.relativeResidual).toBeLessThan(100 * r.attainableAccuracy);
    expect(r.stopReason).toMatch(/eps kappa\(A\)/);
    expect(r.iterations).toBeLessThan(10_000);
    reached.add(r.status);
    // stopOnStagnation: false runs the same iteration on, to its cap.
    const capped = runAlgorithm(well.system, 'cimmino', well.spectral, {
      tolerance: 1e-30,
      maxIterations: 12_000,
      stopOnStagnation: false,
    });
    expect(capped.status).toBe('max-iterations');
    expect(capped.iterations).toBe(12_000);
  });

  it('cancelled', () => {
    const controller = new AbortController();
    controller.abort();
    const r = runAlgorithm(well.system, 'dgd', well.spectral, { tolerance: 1e-8, maxIterations: 100, signal: controller.signal });
    expect(r.status).toBe('cancelled');
    reached.add(r.status);
  });

  it('every status was reached', () => {
    expect([...reached].sort()).toEqual([...RUN_STATUSES].sort());
  });
});

describe("D-HBM's transient growth", () => {
  const stiff = stiffDiagonal();

  it('grows ~ kappa(A) / e at the optimal parameters, within the prediction, and still converges at the default divergenceTolerance', () => {
    const r = runAlgorithm(stiff.system, 'dhbm', stiff.spectral, { tolerance: 1e-8, maxIterations: 100_000 });
    expect(r.status, r.stopReason).toBe('converged');
    const growth = r.growth;
    expect(growth?.cause).toBe('transient');
    expect(growth?.factor).toBeGreaterThan(50);
    expect(growth?.factor).toBeLessThan(DEFAULT_DIVERGENCE_TOLERANCE);
    // The prediction bounds each mode's growth, hence the residual's (sampled spectrum: an estimate).
    expect(growth?.factor).toBeLessThanOrEqual((growth?.predictedFactor as number) * 1.01);
    // Closed form at lambda = L: (1 + (1 + rho) t) rho^t peaks near 2 / (e (1 - rho)).
    const rho = r.theoreticalRate;
    expect(growth?.predictedFactor).toBeGreaterThan(1 / (Math.E * (1 - rho)));
    expect(growth?.predictedFactor).toBeLessThan(3 / (Math.E * (1 - rho)));
  });

  it("on sherman5 (m = 8, the case users met): the residual's 1.6e3-fold rise over 20,000 iterations is the transient, and the rate reads 1 - 1.064e-5, not 1", () => {
    const system = buildDistributedSystem(createProblem({ A: readMatrixCsr('sherman5.mtx'), partition: { machines: 8 } }));
    const r = runAlgorithm(system, 'dhbm', spectralDataOf(analyze(system)), {
      tolerance: 1e-8,
      maxIterations: 20_000,
      stopOnStagnation: false,
    });
    expect(r.status).toBe('max-iterations');
    expect(r.growth?.cause).toBe('transient');
    expect(r.growth?.factor).toBeGreaterThan(1.5e3);
    expect(r.growth?.factor).toBeLessThan(1.8e3);
    expect(r.growth?.predictedFactor).toBeGreaterThan(r.growth!.factor);
    expect(1 - r.theoreticalRate).toBeGreaterThan(1e-5);
    expect(1 - r.theoreticalRate).toBeLessThan(1.1e-5);
    expect(r.stopReason).toContain(`spectral radius for these parameters is 1 - ${(1 - r.theoreticalRate).toExponential(3)} < 1`);
    expect(r.stopReason).not.toMatch(/1\.000e\+0/);
  }, 60_000);

  it('stopped during the transient, the run says it is the transient, with the predicted peak', () => {
    const r = runAlgorithm(stiff.system, 'dhbm', stiff.spectral, { tolerance: 1e-8, maxIterations: 600 });
    expect(r.status).toBe('max-iterations');
    expect(r.growth?.cause).toBe('transient');
    expect(r.stopReason).toMatch(/transient growth of D-HBM, not divergence/);
    expect(r.stopReason).toMatch(/predicted growth of the modes up to about/);
    expect(r.stopReason).toMatch(/more iterations away/);
  });

  it('a divergenceTolerance below the transient stops it, and the stop reason says what it fired on', () => {
    const r = runAlgorithm(stiff.system, 'dhbm', stiff.spectral, { tolerance: 1e-8, maxIterations: 100_000, divergenceTolerance: 10 });
    expect(r.status).toBe('diverged');
    expect(r.growth?.cause).toBe('transient');
    expect(r.stopReason).toMatch(/fired within that transient/);
    // Its status names the test; its sentence does not open "Diverged" and then say "not divergence".
    expect(r.stopReason).toMatch(/^Stopped by the divergence test at iteration \d+: /);
    expect(r.stopReason).not.toMatch(/Diverged/);
  });

  it('a momentum beyond the stable region is true divergence', () => {
    const { alpha } = { alpha: 4.5 / stiff.spectral.L };
    const r = runAlgorithm(stiff.system, 'dhbm', stiff.spectral, {
      tolerance: 1e-8,
      maxIterations: 100_000,
      parameters: { alpha, beta: 0.1 },
    });
    expect(r.theoreticalRate).toBeGreaterThan(1);
    expect(r.status).toBe('diverged');
    expect(r.growth?.cause).toBe('divergence');
  });
});

describe("a start far from the solution's scale: x(0) = 1e200 (every square of a residual or distance overflows)", () => {
  it('the methods without machine estimates converge: the residual and the error are measured scaled while their squares overflow', () => {
    const x0 = new Float64Array(well.system.A.cols).fill(1e200);
    for (const id of ['dhbm', 'dgd', 'dnag', 'cimmino'] as const) {
      const run = runAlgorithm(well.system, id, well.spectral, { tolerance: 1e-8, maxIterations: 20_000, initialGuess: x0 });
      expect(run.status, id).toBe('converged');
      expect(run.relativeResidual, id).toBeLessThanOrEqual(1e-8);
      // The trace starts at x(0)'s true relative residual and error (b = A 1, x* = 1: |x0 - 1| / |1| = 1e200 - 1).
      expect(run.trace.relativeResidual[0] / relativeResidual(well.system.A, x0, well.system.b), id).toBeCloseTo(1, 12);
      expect((run.trace.relativeError as Float64Array)[0] / 1e200, id).toBeCloseTo(1, 12);
    }
  });

  it("APC and Mou-Liu-Morse stop at iteration 0 and say why: their machines' distances cannot be measured", () => {
    const x0 = new Float64Array(well.system.A.cols).fill(1e200);
    for (const id of ['apc', 'mlm'] as const) {
      const run = runAlgorithm(well.system, id, well.spectral, { tolerance: 1e-8, maxIterations: 100, initialGuess: x0 });
      expect(run.status, id).toBe('non-finite');
      expect(run.iterations, id).toBe(0);
      expect(run.stopReason, id).toMatch(
        /too far apart to measure their distance in double precision \(its square overflowed\): x\(0\) is far from the scale of the solution\.$/,
      );
      expect(Number.isFinite(run.relativeResidual), id).toBe(true);
    }
  });
});

describe('rates that round to 1 (kappa beyond ~1/eps): the Hilbert matrix n = 10, kappa(A) = 1.6e13, m = 2', () => {
  const n = 10;
  const hilbert = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => 1 / (i + j + 1)));
  const system = buildDistributedSystem(createProblem({ A: fromRows(hilbert), partition: { machines: 2 } }));
  const analysis = analyze(system);
  const spectral = spectralDataOf(analysis);

  it('the analysis keeps each gap 1 - rho and predicts iterations from it, where DGD, Cimmino and MLM read rho = 1', () => {
    for (const id of ['dgd', 'cimmino', 'mlm'] as const) {
      const { rate, gap } = analysis.rates[id];
      expect(rate, id).toBe(1);
      expect(gap, id).toBeGreaterThan(0);
      expect(gap, id).toBeLessThan(1e-20);
      expect(analysis.recommendation.predictedIterations[id], id).toBe(Math.ceil(Math.log(1e-8) / Math.log1p(-gap)));
    }
    // DGD's is 2 mu / (L + mu), from the analysis' own L and mu.
    const { L, mu } = analysis.conditioning;
    expect(analysis.rates.dgd.gap / ((2 * mu) / (L + mu)) - 1).toBeLessThan(1e-15);
  });

  it('their runs are not called unstable nor diverging: MLM converges, Cimmino says its rate is 1 - gap < 1', () => {
    const mlm = runAlgorithm(system, 'mlm', spectral, { tolerance: 1e-8, maxIterations: 20_000 });
    // It was 'max-iterations' with "the iteration is unstable for these parameters (spectral radius 1.000e+0 >= 1)".
    expect(mlm.status).toBe('converged');
    expect(mlm.relativeResidual).toBeLessThanOrEqual(1e-8);
    const cimmino = runAlgorithm(system, 'cimmino', spectral, { tolerance: 1e-8, maxIterations: 2_000 });
    expect(cimmino.status).toBe('max-iterations');
    expect(cimmino.stopReason).not.toMatch(/divergence|unstable|>= 1/);
    if (cimmino.growth !== null) {
      expect(cimmino.growth.cause).toBe('unexplained');
      expect(cimmino.stopReason).toContain(
        `the spectral radius for these parameters is 1 - ${analysis.rates.cimmino.gap.toExponential(3)} < 1.`,
      );
    }
    // Parameters of one's own keep their computed rate: nu = 4 puts rho at |1 - 4 lambda_max(S)| = 7, true divergence.
    const own = runAlgorithm(system, 'cimmino', spectral, { tolerance: 1e-8, maxIterations: 50, parameters: { nu: 4 } });
    expect(own.status).toBe('diverged');
    expect(own.stopReason).toMatch(/true divergence, the spectral radius of the iteration for these parameters is 7\.000e\+0 >= 1\.$/);
  });
});

describe('a converged run whose recomputed residual fails the test', () => {
  it('says so in its stopReason: the measure and the recomputation differ by rounding, with the attainable accuracy', () => {
    expect(recomputedResidualSentence(1e-9, 2, 1e-8, 0, 1e-15)).toBe('');
    // Passes by absoluteTolerance: |A x - b| = 1e-6 * 2.
    expect(recomputedResidualSentence(1e-6, 2, 1e-8, 3e-6, 1e-15)).toBe('');
    expect(recomputedResidualSentence(2.220446049250313e-16, 2, 1e-30, 0, 4.3e-16)).toBe(
      " Recomputed from the final x, the relative residual is 2.220e-16, above the tolerance: the iteration's measure " +
        'and this one differ by rounding, and the attainable accuracy eps kappa(A) is 4.300e-16.',
    );
    expect(recomputedResidualSentence(3e-16, 1, 1e-30, 0, Number.NaN)).toMatch(/differ by rounding\.$/);
  });

  it('at a tolerance below the attainable accuracy, every converged run meets the test recomputed from its x, or says it does not', () => {
    const system = buildDistributedSystem(
      createProblem({
        A: fromRows([
          [4, 1],
          [1, 3],
        ]),
        rhs: [1, 2],
        partition: { machines: 2 },
      }),
    );
    const spectral = spectralDataOf(analyze(system));
    for (const id of ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const) {
      const run = runAlgorithm(system, id, spectral, { tolerance: 1e-30, maxIterations: 5000 });
      if (run.status !== 'converged') continue;
      if (run.relativeResidual > 1e-30) expect(run.stopReason).toMatch(/Recomputed from the final x, the relative residual is/);
      else expect(run.stopReason).not.toMatch(/Recomputed/);
    }
  });
});
