/**
 * The shared runner: stop reasons (converged, max-iterations, diverged, cancelled in both ways; the
 * other statuses: ./stoppingRules.test.ts),
 * parameter overrides, progress, the bounded trace, and the result's fields.
 */
import { describe, expect, it } from 'vitest';
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { algorithms, ALGORITHM_IDS, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { runCooperatively, type WorkProgress } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { InvalidParameterError } from '../../../src/solvers/errors.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import {
  DEFAULT_DIVERGENCE_TOLERANCE,
  DEFAULT_TRACE_CAP,
  runAlgorithm,
  runAlgorithmWork,
  theoryOfRun,
} from '../../../src/solvers/runner/runAlgorithm.js';
import { loadFixtures, type Fixture } from '../../support/fixtures.js';
import { systemFromRows } from '../algorithms/support.js';

const fixtures = loadFixtures();

function setup(name: string): { f: Fixture; spectral: SpectralData; system: ReturnType<typeof systemFromRows> } {
  const f = fixtures.find((x) => x.name === name);
  if (!f || !f.A) throw new Error(`fixture ${name} missing`);
  const n = f.A.length;
  const sv = new SingularValueDecomposition(new Matrix(f.A)).diagonal;
  const spectral = {
    m: f.expected.m,
    lambdaMinS: f.expected.lambdaMinS,
    lambdaMaxS: f.expected.lambdaMaxS,
    L: sv[0] ** 2,
    mu: sv[n - 1] ** 2,
  };
  return { f, spectral, system: systemFromRows(f.A, f.partition.assignment) };
}

const example2 = setup('example2-n40-p8-sigma0.1'); // m = 5, rho_APC = 0.83
const gaussian40 = setup('gaussian-n40-m4-mu0'); // DGD needs ~1e5 iterations

describe('stop reasons', () => {
  it('converged: the relative residual reaches the tolerance, and the result describes the run', () => {
    const { system, spectral } = example2;
    const r = runAlgorithm(system, 'apc', spectral, { tolerance: 1e-10, maxIterations: 10_000 });
    expect(r.status).toBe('converged');
    expect(r.algorithm).toBe('apc');
    expect(r.relativeResidual).toBeLessThanOrEqual(1e-10 * (1 + 1e-6));
    expect(r.iterations).toBe(r.trace.totalIterations);
    // The tolerance as the user gave it (it read 1.000e-10), the measured residual to 4 digits.
    expect(r.stopReason).toMatch(/^Converged after \d+ iterations: relative residual \d\.\d{3}e-\d+ <= tolerance 1e-10\.$/);
    expect(r.solution).toBeInstanceOf(Float64Array);
    expect(r.solution.length).toBe(system.n);
    expect(r.parameters).toEqual(algorithms.apc.optimal(spectral).parameters);
    expect(r.theoreticalRate).toBeCloseTo(example2.f.expected.rates.apc, 9);
    expect(r.wallTimeMs).toBeGreaterThanOrEqual(0);
    expect(r.trace.consensusDistance).not.toBeNull();
    expect(r.trace.relativeError).not.toBeNull();
    // the estimate and the machines agree at convergence
    const d = r.trace.consensusDistance as Float64Array;
    expect(d[d.length - 1]).toBeLessThan(d[0]);
  });

  it('max-iterations: stops after exactly maxIterations steps (0 allowed)', () => {
    const { system, spectral } = gaussian40;
    const r = runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-12, maxIterations: 250 });
    expect(r.status).toBe('max-iterations');
    expect(r.iterations).toBe(250);
    expect(r.stopReason).toMatch(/maxIterations = 250/);
    const zero = runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-12, maxIterations: 0 });
    expect(zero.status).toBe('max-iterations');
    expect(zero.iterations).toBe(0);
    expect(Array.from(zero.trace.iteration)).toEqual([0]);
    expect(zero.relativeResidual).toBeCloseTo(1, 12); // x(0) = 0
  });

  it('diverged: APC with gamma and eta swapped never converges', () => {
    const { system, spectral } = example2;
    const { gamma, eta } = algorithms.apc.optimal(spectral).parameters;
    expect(eta).toBeGreaterThan(2); // so |1 - eta| > 1: the machines' null-space modes grow
    const r = runAlgorithm(system, 'apc', spectral, { tolerance: 1e-10, maxIterations: 100_000, parameters: { gamma: eta, eta: gamma } });
    expect(r.status).toBe('diverged');
    expect(r.theoreticalRate).toBeGreaterThan(1);
    expect(r.stopReason).toMatch(/Diverged at iteration \d+/);
    expect(r.iterations).toBeLessThan(1000);
  });

  it('diverged: a gradient step beyond 2/L makes the residual explode', () => {
    const { system, spectral } = gaussian40;
    const r = runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-10, maxIterations: 100_000, parameters: { alpha: 2.2 / spectral.L } });
    expect(r.status).toBe('diverged');
    expect(r.stopReason).toMatch(/relative (residual|error)/);
    const last = r.trace.relativeResidual[r.trace.relativeResidual.length - 1];
    expect(last).toBeGreaterThan(DEFAULT_DIVERGENCE_TOLERANCE * r.trace.relativeResidual[0] * 0.99);
  });

  it('cancelled: a signal aborted before the start gives a cancelled result with the initial point', () => {
    const { system, spectral } = example2;
    const controller = new AbortController();
    controller.abort();
    const r = runAlgorithm(system, 'dhbm', spectral, { tolerance: 1e-10, maxIterations: 1000, signal: controller.signal });
    expect(r.status).toBe('cancelled');
    expect(r.iterations).toBe(0);
    expect(Array.from(r.trace.iteration)).toEqual([0]);
    expect(r.stopReason).toMatch(/Cancelled/);
  });

  it('cancelled: a signal aborted during the run stops it at the next iteration with a partial trace', () => {
    const { system, spectral } = gaussian40;
    const controller = new AbortController();
    const r = runAlgorithm(system, 'dgd', spectral, {
      tolerance: 1e-12,
      maxIterations: 1_000_000,
      signal: controller.signal,
      progressIntervalMs: 0,
      onProgress: (p) => {
        if ((p.iteration ?? 0) >= 57) controller.abort();
      },
    });
    expect(r.status).toBe('cancelled');
    expect(r.iterations).toBe(57);
    expect(r.trace.iteration[r.trace.iteration.length - 1]).toBe(57);
    expect(r.relativeResidual).toBeGreaterThan(1e-12);
  });

  it('cancelled: runCooperatively throws CancelledError into the run, which returns its partial result', async () => {
    const { system, spectral } = gaussian40;
    const controller = new AbortController();
    let seen = 0;
    const pending = runCooperatively(runAlgorithmWork(system, 'dgd', spectral, { tolerance: 1e-14, maxIterations: 50_000_000 }), {
      signal: controller.signal,
      sliceMs: 5,
      progressIntervalMs: 0,
      onProgress: (p) => {
        seen = p.iteration ?? seen;
      },
    });
    setTimeout(() => controller.abort(), 30);
    const r = await pending;
    expect(r.status).toBe('cancelled');
    expect(r.iterations).toBeGreaterThan(0);
    expect(r.iterations).toBeLessThan(50_000_000);
    expect(seen).toBeGreaterThan(0);
    expect(r.trace.iteration[r.trace.iteration.length - 1]).toBe(r.iterations);
    expect(r.solution.length).toBe(system.n);
  });

  it('cancelled: runCooperatively with the same signal in the options also ends cancelled', async () => {
    const { system, spectral } = gaussian40;
    const controller = new AbortController();
    const pending = runCooperatively(
      runAlgorithmWork(system, 'dnag', spectral, { tolerance: 1e-300, maxIterations: 50_000_000, signal: controller.signal }),
      { signal: controller.signal, sliceMs: 5 },
    );
    setTimeout(() => controller.abort(), 20);
    const r = await pending;
    expect(r.status).toBe('cancelled');
  });
});

describe('parameters', () => {
  it('user overrides are merged over the optimal parameters and used', () => {
    const { system, spectral } = example2;
    const optimal = algorithms.dhbm.optimal(spectral).parameters;
    const alpha = optimal.alpha / 2;
    const r = runAlgorithm(system, 'dhbm', spectral, { tolerance: 1e-10, maxIterations: 20_000, parameters: { alpha } });
    expect(r.parameters).toEqual({ alpha, beta: optimal.beta });
    expect(r.theoreticalRate).toBe(algorithms.dhbm.rate(spectral, { alpha, beta: optimal.beta }));
    expect(r.theoreticalRate).toBeGreaterThan(example2.f.expected.rates.dhbm);
    expect(r.status).toBe('converged');
    expect(Math.abs((r.empiricalRate as number) - r.theoreticalRate)).toBeLessThanOrEqual(0.1 * (1 - r.theoreticalRate));
  });

  it('user overrides are validated before anything runs', () => {
    const { system, spectral } = example2;
    const run = (id: AlgorithmId, parameters: Record<string, number>) => () =>
      runAlgorithm(system, id, spectral, { tolerance: 1e-8, maxIterations: 10, parameters });
    expect(run('apc', { alpha: 1 })).toThrow(InvalidParameterError);
    expect(run('apc', { alpha: 1 })).toThrow(/gamma, eta/);
    expect(run('dnag', { beta: 1 })).toThrow(InvalidParameterError);
    expect(run('dgd', { alpha: Number.NaN })).toThrow(InvalidParameterError);
    expect(run('mlm', { gamma: 1 })).toThrow(InvalidParameterError);
    expect(() => runAlgorithm(system, 'nope' as AlgorithmId, spectral, { tolerance: 1e-8, maxIterations: 10 })).toThrow(/valid ids/);
    expect(() => runAlgorithm(system, 'dgd', spectral, { tolerance: 0, maxIterations: 10 })).toThrow(InvalidParameterError);
    expect(() => runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-8, maxIterations: -1 })).toThrow(InvalidParameterError);
    expect(() => runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-8, maxIterations: 10, traceCap: 1 })).toThrow(InvalidParameterError);
  });
});

describe('a run without the spectral data (every parameter given, the analysis after it)', () => {
  it('needs every parameter', () => {
    const { system } = example2;
    expect(() => runAlgorithm(system, 'apc', null, { tolerance: 1e-10, maxIterations: 10, parameters: { gamma: 1 } })).toThrow(
      InvalidParameterError,
    );
  });

  it('iterates as with it, and theoryOfRun gives the rate, eps kappa(A) and the growth diagnosis it would have reported', () => {
    const { system, spectral } = gaussian40;
    for (const id of ['dhbm', 'dgd'] as const) {
      const parameters = algorithms[id].optimal(spectral).parameters;
      const options = { tolerance: 1e-10, maxIterations: 400, parameters, stopOnStagnation: false };
      const known = runAlgorithm(system, id, spectral, options);
      const unknown = runAlgorithm(system, id, null, options);
      expect(Number.isNaN(unknown.theoreticalRate)).toBe(true);
      expect(unknown.solution).toEqual(known.solution);
      const theory = theoryOfRun(unknown, spectral, options);
      expect(theory).toEqual({
        theoreticalRate: known.theoreticalRate,
        attainableAccuracy: known.attainableAccuracy,
        growth: known.growth,
        stopReason: known.stopReason,
      });
    }
  });

  it('a run reported converged whose parameters turn out unstable says so', () => {
    const { system, spectral } = gaussian40;
    // A step just beyond 2/L: the top mode grows slowly, the rest converge first.
    const parameters = { alpha: 2.0001 / spectral.L };
    const run = runAlgorithm(system, 'dgd', null, { tolerance: 0.9, maxIterations: 100, parameters });
    expect(run.status).toBe('converged');
    const theory = theoryOfRun(run, spectral, { tolerance: 0.9 });
    expect(theory.theoreticalRate).toBeGreaterThan(1);
    expect(theory.stopReason).toMatch(/known after the run .* >= 1: a run with the analysis would not have reported convergence/);
  });
});

describe('progress', () => {
  it('the generator yields { phase: "solve", algorithm, iteration, relativeResidual } after each iteration', () => {
    const { system, spectral } = example2;
    const work = runAlgorithmWork(system, 'cimmino', spectral, { tolerance: 1e-6, maxIterations: 100 });
    const seen: WorkProgress[] = [];
    let step = work.next();
    while (!step.done) {
      if (step.value) seen.push(step.value);
      step = work.next();
    }
    expect(seen.length).toBe(100); // max-iterations: every iteration reported
    seen.forEach((p, k) => {
      expect(p).toEqual({ phase: 'solve', algorithm: 'cimmino', iteration: k + 1, relativeResidual: expect.any(Number) as number });
    });
    expect(step.value.status).toBe('max-iterations');
  });

  it('runAlgorithm calls onProgress, throttled', () => {
    const { system, spectral } = example2;
    const calls: WorkProgress[] = [];
    const r = runAlgorithm(system, 'dhbm', spectral, { tolerance: 1e-10, maxIterations: 10_000, onProgress: (p) => calls.push(p) });
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThan(r.iterations);
    expect(calls[0]).toMatchObject({ phase: 'solve', algorithm: 'dhbm', iteration: 1 });
  });
});

describe('trace', () => {
  it('respects the cap, always keeping the first and the last iteration', () => {
    const { system, spectral } = gaussian40;
    for (const [cap, iterations] of [
      [16, 1000],
      [2, 37],
      [5, 64],
      [100, 99],
    ] as const) {
      const r = runAlgorithm(system, 'dgd', spectral, { tolerance: 1e-14, maxIterations: iterations, traceCap: cap });
      const t = r.trace;
      expect(t.cap).toBe(cap);
      expect(t.iteration.length).toBeLessThanOrEqual(cap);
      expect(t.iteration[0]).toBe(0);
      expect(t.iteration[t.iteration.length - 1]).toBe(iterations);
      expect(t.totalIterations).toBe(iterations);
      for (let k = 1; k < t.iteration.length; k++) expect(t.iteration[k]).toBeGreaterThan(t.iteration[k - 1]);
      expect(t.relativeResidual.length).toBe(t.iteration.length);
      expect((t.relativeError as Float64Array).length).toBe(t.iteration.length);
      expect(t.consensusDistance).toBeNull();
      expect(t.downsampled).toBe(iterations + 1 > cap);
      expect(t.relativeResidual[t.relativeResidual.length - 1]).toBeCloseTo(r.relativeResidual, 12);
    }
  });

  it('uses DEFAULT_TRACE_CAP by default and keeps every point of a short run', () => {
    expect(DEFAULT_TRACE_CAP).toBe(2048);
    const { system, spectral } = example2;
    const r = runAlgorithm(system, 'apc', spectral, { tolerance: 1e-10, maxIterations: 10_000 });
    expect(r.trace.cap).toBe(DEFAULT_TRACE_CAP);
    expect(Array.from(r.trace.iteration)).toEqual(Array.from({ length: r.iterations + 1 }, (_, k) => k));
    expect(r.trace.downsampled).toBe(false);
  });
});

describe('without a known solution', () => {
  it('reports no error and fits the empirical rate to the residual', () => {
    const { f, spectral } = example2;
    const rows = f.A as number[][];
    const n = rows.length;
    const b = Float64Array.from({ length: n }, (_, k) => Math.sin(k + 1));
    const m = f.expected.m;
    const system = buildDistributedSystem({
      n,
      A: fromRows(rows),
      b,
      xTrue: null,
      partition: partitionFromAssignment(Int32Array.from(f.partition.assignment), m),
    });
    for (const id of ALGORITHM_IDS) {
      if (id === 'dgd' || id === 'mlm') continue;
      const r = runAlgorithm(system, id, spectral, { tolerance: 1e-10, maxIterations: 50_000 });
      expect(r.status, id).toBe('converged');
      expect(r.relativeError).toBeNull();
      expect(r.trace.relativeError).toBeNull();
      const rho = f.expected.rates[id];
      expect(Math.abs((r.empiricalRate as number) - rho), id).toBeLessThanOrEqual(0.1 * (1 - rho));
    }
  });
});
