import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DEPLOYMENT,
  NO_WORK,
  finishesFirst,
  cacheFraction,
  iterationCost,
  secondsHere,
  secondsOnDeployment,
  startSecondsHere,
  systemCost,
  timeToSolution,
  type IterationCost,
  type SystemCost,
} from '../../../src/solvers/analysis/timeToSolution.js';
import { buildDistributedSystem, createProblem, generateMatrix } from '../../../src/solvers/index.js';
import { describeEachBackend } from '../../support/backends.js';
import { parallelMinWork } from '../../../src/solvers/parallel/threads.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import type { Calibration } from '../../../src/solvers/analysis/types.js';
import { factorSolveRates, measureCalibration } from '../../../src/solvers/analysis/calibration.js';
import { lastThreadStartSeconds, runningSolverWorkers } from '../../../src/solvers/parallel/engine.js';
import { allWorkersExited, forceThreads } from '../parallel/support.js';
import { ALGORITHM_IDS } from '../../../src/solvers/algorithms/registry.js';

// Dense: n = 10, m = 2, machine 0 holds 3 full rows, machine 1 holds 2 rows on a support of 4 columns.
const dense: SystemCost = {
  storage: 'dense',
  n: 10,
  machines: [
    { p: 3, c: 10, entriesA: 30, entriesQ: 30, factorNnz: 0, refinement: 0 },
    { p: 2, c: 4, entriesA: 8, entriesQ: 8, factorNnz: 0, refinement: 0 },
  ],
  errorMeasured: false,
};
// CSR: n = 6, m = 2, supports 4 and 3, nnz 7 and 5, factor nonzeros 3 and 3, one refinement on machine 1.
const csr: SystemCost = {
  storage: 'csr',
  n: 6,
  machines: [
    { p: 2, c: 4, entriesA: 7, entriesQ: 0, factorNnz: 3, refinement: 0 },
    { p: 2, c: 3, entriesA: 5, entriesQ: 0, factorNnz: 3, refinement: 1 },
  ],
  errorMeasured: false,
};
const calibration: Calibration = {
  backend: 'typescript',
  flopsPerSecond: 1e9,
  flopsPerSecondInCache: 1e9,
  productFlopsPerSecond: 1e9,
  productFlopsPerSecondInCache: 1e9,
  triangleEntrySeconds: 0,
  bytesPerSecond: 1e9,
  bytesPerSecondInCache: 1e9,
  csrLoopBytesPerSecond: 1e9,
  csrLoopBytesPerSecondInCache: 1e9,
  factorBytesPerSecond: 1e9,
  factorBytesPerSecondInCache: 1e9,
  factorColumnSeconds: 0,
  inCacheBytes: 8 * 2 ** 20,
  outOfCacheBytes: 48 * 2 ** 20,
  vectorBytesPerSecond: 1e9,
  stepBytesPerSecond: 2e9,
  consensusEntrySeconds: 0,
  perMachineOverheadSeconds: 0,
  threadStartSeconds: 0.1,
  phaseSyncSeconds: 0,
  threadSlowdown: { dense: 1, csr: 1 },
  runnerIterationSeconds: 0,
  overheads: null,
  measuredAt: '2025-01-01T00:00:00.000Z',
  refreshAfterSeconds: 600,
};

describe('iterationCost', () => {
  it('counts messages and bytes on a dense system', () => {
    // APC / MLM: xbar out and x_i back, vectors of n: 2 m n x 8 bytes.
    for (const id of ['apc', 'mlm'] as const) {
      const c = iterationCost(id, dense);
      expect(c.messagesPerIteration).toBe(4);
      expect(c.bytesPerIteration).toBe(2 * 8 * 10 * 2);
    }
    // Gradient methods and Cimmino: vectors of the supports, 2 x 8 x (10 + 4).
    for (const id of ['dhbm', 'dgd', 'dnag', 'cimmino'] as const) {
      const c = iterationCost(id, dense);
      expect(c.messagesPerIteration).toBe(4);
      expect(c.bytesPerIteration).toBe(2 * 8 * 14);
    }
  });

  it('counts each machine work on a dense system', () => {
    expect(iterationCost('dhbm', dense).machines.map((w) => w.flops)).toEqual([120, 32]);
    // APC: one fused pass over Q_i (4 flops an entry), then R^T w over R's triangle, p (p + 1) / 2 entries (p = 3 and 2).
    expect(iterationCost('apc', dense).machines.map((w) => [w.flops, w.productFlops, w.triangleEntries])).toEqual([
      [4 * 30, 0, 6],
      [4 * 8, 0, 3],
    ]);
    // Cimmino: its two product passes apart (A_i x, then Q_i w: 2 flops an entry each, their own rate) and the solve with R^T.
    expect(iterationCost('cimmino', dense).machines.map((w) => [w.flops, w.productFlops, w.triangleEntries])).toEqual([
      [0, 2 * 30 + 2 * 30, 6],
      [0, 16 + 16, 3],
    ]);
    // APC updates x_i (3 vectors of n) and gathers on a partial support (2 vectors of c).
    expect(iterationCost('apc', dense).machines.map((w) => w.vectorBytes)).toEqual([240, 240 + 64]);
    // Taskmaster: APC averages m copies of n; D-HBM adds the supports' terms.
    expect(iterationCost('apc', dense).taskmaster.vectorBytes).toBe(8 * 2 * 10 + 40 * 10);
    // D-HBM's step (the backend's) adds the supports' terms and updates x and z; no TypeScript vector loop is left.
    expect(iterationCost('dhbm', dense).taskmaster.stepBytes).toBe(16 * 14 + 40 * 10);
    expect(iterationCost('dgd', dense).taskmaster.stepBytes).toBe(16 * 14 + 24 * 10);
    expect(iterationCost('dhbm', dense).taskmaster.vectorBytes).toBe(0);
    expect(iterationCost('apc', dense).taskmaster.stepBytes).toBe(0);
  });

  it('counts CSR passes and factor solves', () => {
    expect(iterationCost('dhbm', csr).machines.map((w) => w.matrixBytes)).toEqual([12 * 7, 12 * 5]);
    // A v and A^T y (the loops), two sweeps with L (the solves); machine 1's refinement correction
    // repeats all four (A^T y, A u, two sweeps). None of it is the gradient kernel's.
    const apc = iterationCost('apc', csr).machines;
    expect(apc.map((w) => w.csrLoopBytes)).toEqual([24 * 7, 2 * 24 * 5]);
    expect(apc.map((w) => w.factorBytes)).toEqual([24 * 3, 2 * 24 * 3]);
    // Each sweep goes through the factor's p columns.
    expect(apc.map((w) => w.factorColumns)).toEqual([2 * 2, 2 * 2 * 2]);
    expect(apc.map((w) => w.matrixBytes)).toEqual([0, 0]);
    expect(iterationCost('cimmino', csr).bytesPerIteration).toBe(2 * 8 * 7);
    expect(iterationCost('mlm', csr).bytesPerIteration).toBe(2 * 8 * 6 * 2);
    expect(iterationCost('dnag', csr).messagesPerIteration).toBe(4);
  });
});

describe('deployment', () => {
  it('is the slowest machine, the taskmaster and one round of messages', () => {
    const cost = iterationCost('dhbm', dense);
    const d = { machineGflops: 1, memoryBandwidthGBs: 1, latencyMicroseconds: 10, bandwidthGBs: 1 };
    // Machine 0: max(120 / 1e9, (240 + 0) / 1e9) = 240 ns; taskmaster 624 bytes = 624 ns; 2 x 10 us + 224 bytes at 1 GB/s.
    expect(secondsOnDeployment(cost, d)).toBeCloseTo(240e-9 + 624e-9 + 20e-6 + 224e-9, 15);
  });

  it('gives all six algorithms here and on the deployment', () => {
    const rates = {
      apc: { rate: 0.5, gap: 0.5 },
      dhbm: { rate: 0.9, gap: 0.1 },
      dgd: { rate: 0.99, gap: 0.01 },
      dnag: { rate: 0.95, gap: 0.05 },
      cimmino: { rate: 0.99, gap: 0.01 },
      mlm: { rate: 1, gap: 0 },
    };
    const t = timeToSolution({ system: dense, rates, tolerance: 1e-8, calibration, deployment: DEFAULT_DEPLOYMENT });
    for (const id of ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const) {
      expect(t[id].secondsPerIteration).toBeGreaterThan(0);
      expect(t.deployment?.[id].bytesPerIteration).toBe(t[id].bytesPerIteration);
    }
    expect(t.apc.iterations).toBe(27);
    // The start (one thread: a copy of the data, Q_i's 38 entries and R's triangles' 6 + 3, then the setup's first pass) and 27 iterations.
    expect(t.apc.startSeconds).toBeCloseTo((8 * (38 + 9)) / 1e9 + t.apc.secondsPerIteration, 15);
    expect(t.apc.seconds).toBeCloseTo(t.apc.startSeconds + 27 * t.apc.secondsPerIteration, 15);
    expect(t.deployment?.apc.startSeconds).toBe(0);
    expect(t.mlm.iterations).toBeNull();
    expect(t.mlm.seconds).toBeNull();
    expect(t.deployment?.assumptions).toEqual(DEFAULT_DEPLOYMENT);
  });
});

describe('finishesFirst', () => {
  const base = { iterations: 0, secondsPerIteration: 0, startSeconds: 0, seconds: 0, bytesPerIteration: 0, messagesPerIteration: 0 };
  const times = (apc: [number, number], dhbm: [number, number]) => {
    const all = { apc: base, dhbm: base, dgd: base, dnag: base, cimmino: base, mlm: base };
    return {
      ...all,
      apc: { ...base, iterations: apc[0], secondsPerIteration: apc[1], seconds: apc[0] * apc[1] },
      dhbm: { ...base, iterations: dhbm[0], secondsPerIteration: dhbm[1], seconds: dhbm[0] * dhbm[1] },
    };
  };

  it('names D-HBM when APC needs fewer iterations but each costs far more', () => {
    const here = times([100, 0.1], [300, 0.015]);
    const f = finishesFirst('apc', { ...here, calibration });
    expect(f.here).toBe('dhbm');
    expect(f.deployment).toBeNull();
    expect(f.explanation).toContain('differs from the per-iteration answer');
  });

  it('can differ between here and the deployment', () => {
    const f = finishesFirst('apc', {
      ...times([100, 0.1], [300, 0.015]),
      calibration,
      deployment: { ...times([100, 0.001], [300, 0.001]), assumptions: DEFAULT_DEPLOYMENT },
    });
    expect(f.here).toBe('dhbm');
    expect(f.deployment).toBe('apc');
  });

  it("names each of the two whose predicted iterations exceed the job's maxIterations, and only with a limit", () => {
    const t = { ...times([100, 0.1], [300, 0.015]), calibration };
    const limited = finishesFirst('apc', t, 200).explanation;
    expect(limited).toContain(
      "D-HBM needs 300 iterations, more than this job's maxIterations (200): a run of it with these options stops at 'max-iterations'",
    );
    expect(limited).not.toContain('APC needs');
    expect(finishesFirst('apc', t, 50).explanation).toContain(
      "APC and D-HBM need 100 and 300 iterations, more than this job's maxIterations (50): runs of them with these options stop at 'max-iterations'",
    );
    expect(finishesFirst('apc', t, 300).explanation).not.toContain('maxIterations');
    expect(finishesFirst('apc', t).explanation).not.toContain('maxIterations');
  });

  it('agrees when iterations dominate', () => {
    const f = finishesFirst('apc', { ...times([10, 0.1], [3000, 0.015]), calibration });
    expect(f.here).toBe('apc');
    expect(f.explanation).toContain('agrees');
  });
});

describe('secondsHere', () => {
  const nothing = NO_WORK;
  // Two chunks of 3000 and 1000 flops, no vectors: 3 us and 1 us at 1 GFLOP/s.
  const cost: IterationCost = {
    algorithm: 'apc',
    storage: 'dense',
    machineCount: 2,
    machines: [
      { ...nothing, flops: 3000, residentBytes: 6000, entries: 750 },
      { ...nothing, flops: 1000, residentBytes: 2000, entries: 250 },
    ],
    taskmaster: { ...nothing, vectorBytes: 500 },
    bytesPerIteration: 0,
    messagesPerIteration: 4,
  };
  const timed = { ...calibration, perMachineOverheadSeconds: 1e-7, phaseSyncSeconds: 2e-6, runnerIterationSeconds: 1e-6 };
  // Blocks of 1000 and 100,000 bytes timed at 2 and 1 GFLOP/s.
  const cacheBlocks = {
    ...timed,
    perMachineOverheadSeconds: 0,
    inCacheBytes: 1000,
    outOfCacheBytes: 100_000,
    flopsPerSecondInCache: 2e9,
    flopsPerSecond: 1e9,
  };

  it('adds the chunks one after the other on one thread, then the taskmaster', () => {
    expect(secondsHere(cost, timed, 1)).toBeCloseTo(3e-6 + 1e-6 + 2e-7 + 5e-7 + 1e-6, 15);
  });

  it("adds the algorithm's measured fixed costs per iteration and per machine instead of the runner's constant", () => {
    const fixed = { perIteration: 4e-6, perMachine: 1.5e-6 };
    const overheads = Object.fromEntries(
      ALGORITHM_IDS.map((id) => [
        id,
        { dense: id === 'apc' ? fixed : { perIteration: 0, perMachine: 0 }, csr: { perIteration: 1, perMachine: 1 } },
      ]),
    ) as NonNullable<Calibration['overheads']>;
    const measured = { ...timed, overheads };
    // 2 machines: 4 + 2 x 1.5 us in place of the runner's 1 us.
    expect(secondsHere(cost, measured, 1)).toBeCloseTo(secondsHere(cost, timed, 1) - 1e-6 + 4e-6 + 3e-6, 15);
    expect(secondsHere({ ...cost, machineCount: 10 }, measured, 1)).toBeCloseTo(secondsHere(cost, timed, 1) - 1e-6 + 4e-6 + 15e-6, 15);
    // Another algorithm's, or another storage's, are not this one's.
    expect(secondsHere({ ...cost, algorithm: 'dhbm' }, measured, 1)).toBeCloseTo(secondsHere(cost, timed, 1) - 1e-6, 15);
    expect(secondsHere({ ...cost, storage: 'csr' }, measured, 1)).toBeCloseTo(secondsHere(cost, timed, 1) - 1e-6 + 3, 12);
  });

  it('takes max(sum / threads, largest chunk) and a phase synchronisation on several threads', () => {
    // Sum 4.2 us over 2 threads = 2.1 us, but the largest chunk takes 3.1 us.
    expect(secondsHere(cost, timed, 2)).toBeCloseTo(3.1e-6 + 2e-6 + 5e-7 + 1e-6, 15);
    // Over 8 threads still the largest chunk.
    expect(secondsHere(cost, timed, 8)).toBeCloseTo(3.1e-6 + 2e-6 + 5e-7 + 1e-6, 15);
    const even = { ...cost, machines: [cost.machines[0], cost.machines[0]] };
    expect(secondsHere(even, timed, 2)).toBeCloseTo(3.1e-6 + 2e-6 + 5e-7 + 1e-6, 15);
  });

  it("multiplies a threaded phase's chunks and step by the threads' slowdown, not the one-thread run nor the synchronisation", () => {
    const slowed = { ...timed, threadSlowdown: { dense: 1.5, csr: 1 } };
    // Two threads: the largest chunk (3.1 us) 1.5 times, then the synchronisation (2 us), the taskmaster and the runner.
    expect(secondsHere(cost, slowed, 2)).toBeCloseTo(1.5 * 3.1e-6 + 2e-6 + 5e-7 + 1e-6, 15);
    // Evenly split chunks: half their sum, 1.5 times.
    const even = { ...cost, machines: [cost.machines[1], cost.machines[1], cost.machines[1], cost.machines[1]] };
    expect(secondsHere(even, slowed, 2)).toBeCloseTo(1.5 * 2 * 1.1e-6 + 2e-6 + 5e-7 + 1e-6, 15);
    // One thread: the chunks' prices as they are.
    expect(secondsHere(cost, slowed, 1)).toBeCloseTo(secondsHere(cost, timed, 1), 15);
    // A threaded step phase: its half 1.5 times, then its synchronisation.
    const step = { ...cost, machines: [], taskmaster: { ...nothing, stepBytes: 8000, stepEntries: 250_000 } };
    expect(secondsHere(step, slowed, 2)).toBeCloseTo(2e-6 + 1.5 * 2e-6 + 2e-6 + 1e-6, 15);
  });

  it('prices a working set between the cache blocks in between, linear in its logarithm', () => {
    const c = cacheBlocks;
    expect(cacheFraction(500, c)).toBe(0);
    expect(cacheFraction(10_000, c)).toBeCloseTo(0.5, 15);
    expect(cacheFraction(1e6, c)).toBe(1);
    const one = (resident: number): IterationCost => ({
      ...cost,
      machines: [{ ...cost.machines[0], residentBytes: resident }],
      taskmaster: cost.taskmaster,
    });
    const flopsSeconds = (resident: number): number => secondsHere(one(resident), c, 1) - 5e-7 - 1e-6;
    expect(flopsSeconds(1000)).toBeCloseTo(3000 / 2e9, 15);
    expect(flopsSeconds(100_000)).toBeCloseTo(3000 / 1e9, 15);
    expect(flopsSeconds(10_000)).toBeCloseTo(0.5 * (3000 / 2e9) + 0.5 * (3000 / 1e9), 15);
  });

  it("on several threads, prices each thread's share of the working set in or out of cache, not the whole", () => {
    const c = { ...cacheBlocks, phaseSyncSeconds: 0 };
    // Two even chunks of 2000 flops holding 1000 bytes each: 2000 bytes in all, 1000 a thread.
    const chunk = { ...nothing, flops: 2000, residentBytes: 1000, entries: 250 };
    const two: IterationCost = { ...cost, machines: [chunk, chunk], taskmaster: nothing };
    // One thread streams all 2000 bytes: log(2000 / 1000) / log(100) of the way out of cache.
    const f = Math.log(2) / Math.log(100);
    expect(secondsHere(two, c, 1)).toBeCloseTo(4000 * ((1 - f) / 2e9 + f / 1e9) + 1e-6, 15);
    // Two threads, 1000 bytes each: both chunks at the in-cache rate, side by side.
    expect(secondsHere(two, c, 2)).toBeCloseTo(2000 / 2e9 + 1e-6, 15);
  });

  it("prices the dense product passes and the triangle's entries at their own calibrated rates", () => {
    const denseWork = { ...nothing, productFlops: 4000, triangleEntries: 300, residentBytes: 100 };
    const rates = { ...timed, perMachineOverheadSeconds: 0, productFlopsPerSecondInCache: 2e9, triangleEntrySeconds: 1e-9 };
    const one: IterationCost = { ...cost, machines: [denseWork], taskmaster: nothing };
    // 4000 flops at 2 GFLOP/s (in cache: 100 bytes held) and 300 entries at 1 ns, then the runner's 1 us.
    expect(secondsHere(one, rates, 1)).toBeCloseTo(2e-6 + 3e-7 + 1e-6, 15);
    // Out of cache, the out-of-cache product rate (1 GFLOP/s here).
    expect(secondsHere({ ...one, machines: [{ ...denseWork, residentBytes: 1e9 }] }, rates, 1)).toBeCloseTo(4e-6 + 3e-7 + 1e-6, 15);
    // On a deployment a product pass reads 8 bytes per 2 flops, the triangle 8 bytes an entry: memory binds at 1 GB/s.
    const d = { machineGflops: 1000, memoryBandwidthGBs: 1, latencyMicroseconds: 0, bandwidthGBs: 1 };
    expect(secondsOnDeployment({ ...one, bytesPerIteration: 0 }, d)).toBeCloseTo((4000 * 4 + 300 * 8) / 1e9, 15);
  });

  it('prices CSR loop and factor bytes at their own calibrated rates, each column of a factor sweep and each consensus entry', () => {
    const csrWork = { ...nothing, matrixBytes: 1000, csrLoopBytes: 2000, factorBytes: 4000, factorColumns: 500, consensusEntries: 250 };
    const rates = {
      ...timed,
      perMachineOverheadSeconds: 0,
      bytesPerSecondInCache: 1e9,
      csrLoopBytesPerSecondInCache: 2e9,
      factorBytesPerSecondInCache: 4e9,
      factorColumnSeconds: 4e-9,
      consensusEntrySeconds: 4e-9,
    };
    const only = { ...cost, machines: [csrWork], taskmaster: { ...cost.taskmaster, vectorBytes: 0 } };
    // 1 us of the gradient kernel, 1 us of loops, 1 us of solves' bytes, 2 us of their columns, 1 us of consensus
    // entries; then the runner's 1 us.
    expect(secondsHere(only, rates, 1)).toBeCloseTo(6e-6 + 1e-6, 15);
  });

  it("prices the gradient methods' step at its own rate (the backend's) and the vector loops at theirs", () => {
    const rates = { ...timed, perMachineOverheadSeconds: 0, vectorBytesPerSecond: 1e9, stepBytesPerSecond: 4e9 };
    const only = { ...cost, machines: [], taskmaster: { ...nothing, vectorBytes: 1000, stepBytes: 8000, stepEntries: 250_000 } };
    // 1 us of vector loops, 2 us of the step; then the runner's 1 us.
    expect(secondsHere(only, rates, 1)).toBeCloseTo(3e-6 + 1e-6, 15);
    // On two threads a step of 250,000 entries (DEFAULT_PARALLEL_MIN_WORK) is a phase of its own: half of it, and a
    // phase's synchronisation (2 us), after the pass's phase (no chunks here: its synchronisation alone).
    expect(secondsHere(only, rates, 2)).toBeCloseTo(2e-6 + (1e-6 + 2e-6) + 1e-6 + 1e-6, 15);
    // A smaller step stays on the calling thread.
    const small = { ...only, taskmaster: { ...only.taskmaster, stepEntries: 249_999 } };
    expect(secondsHere(small, rates, 2)).toBeCloseTo(2e-6 + 2e-6 + 1e-6 + 1e-6, 15);
  });

  it('starts a threaded run at the thread start plus the setup pass, a one-thread run at a copy of its data', () => {
    expect(startSecondsHere(cost, timed, 2)).toBeCloseTo(0.1 + secondsHere(cost, timed, 2), 15);
    expect(startSecondsHere(cost, timed, 1)).toBeCloseTo(8000 / 1e9 + secondsHere(cost, timed, 1), 15);
  });
});

describe('chunks', () => {
  it('prices a CSR gradient pass that is one chunk on the global columns without gathers or per-machine terms', () => {
    const whole: SystemCost = { ...csr, gradientChunks: [{ entries: 12, c: 0 }] };
    const c = iterationCost('dhbm', whole);
    expect(c.machines).toHaveLength(1);
    expect(c.machines[0]).toMatchObject({ matrixBytes: 12 * 12, vectorBytes: 0, entries: 12 });
    // The step reads the one term as g (nothing to sum) and updates x and z.
    expect(c.taskmaster.stepBytes).toBe(5 * 8 * 6);
    // The messages are still the machines' (a deployment has m machines).
    expect(c.bytesPerIteration).toBe(2 * 8 * 7);
  });

  it('prices CSR APC as a Cimmino pass: no n-long update per machine', () => {
    const c = iterationCost('apc', csr);
    expect(c.machines.map((w) => w.vectorBytes)).toEqual([16 * 4, 16 * 3]);
    // The taskmaster's measure-and-advance loop over the supports and n, then the sum (the offsets scattered) and xbar.
    expect(c.taskmaster.consensusEntries).toBe(7 + 6);
    expect(c.taskmaster.vectorBytes).toBe(3 * 8 * 7 + 4 * 8 * 6);
    expect(iterationCost('cimmino', csr).taskmaster.consensusEntries).toBe(0);
    expect(iterationCost('apc', dense).taskmaster.consensusEntries).toBe(0);
    expect(c.machines.map((w) => w.entries)).toEqual([2 * (7 + 3), 4 * (5 + 3)]);
  });

  it("prices the run's measure of its error (x and x*, 16 n bytes) on the taskmaster when x* is known", () => {
    for (const system of [dense, csr])
      for (const id of ALGORITHM_IDS) {
        const without = iterationCost(id, system).taskmaster.vectorBytes;
        expect(iterationCost(id, { ...system, errorMeasured: true }).taskmaster.vectorBytes - without).toBe(16 * system.n);
      }
    const A = poisson2d(10);
    // No b: x* is generated with b, and every run measures its error; a given b leaves x* unknown.
    expect(systemCost(buildDistributedSystem(createProblem({ A, partition: { machines: 4 } }))).errorMeasured).toBe(true);
    const b = new Float64Array(100).fill(1);
    expect(systemCost(buildDistributedSystem(createProblem({ A, rhs: b, partition: { machines: 4 } }))).errorMeasured).toBe(false);
  });

  it('cuts a small CSR system into one gradient chunk and a dense one into row chunks', () => {
    const sparse = buildDistributedSystem(createProblem({ A: poisson2d(10), partition: { machines: 4 } }));
    expect(systemCost(sparse).gradientChunks).toEqual([{ entries: 460, c: 0 }]);
    const A = generateMatrix({ generator: 'gaussian', n: 40, mean: 0, std: 1, seed: 3 });
    const chunks = systemCost(buildDistributedSystem(createProblem({ A, partition: { machines: 2 } }))).gradientChunks ?? [];
    expect(chunks.reduce((s, chunk) => s + chunk.entries, 0)).toBe(1600);
    expect(chunks.every((chunk) => chunk.c === 40)).toBe(true);
  });
});

describe('factorSolveRates', () => {
  // Solves priced at 3 ns a column of a sweep and 10 GB/s (in cache), 5 GB/s (out): two sweeps of rows columns each.
  const timing = (rows: number, band: number, bytesPerSecond: number) => ({
    rows,
    band,
    seconds: 2 * rows * 3e-9 + (24 * (band * rows - (band * (band - 1)) / 2)) / bytesPerSecond,
  });

  it('separates the cost per column from the cost per entry', () => {
    const rates = factorSolveRates([timing(100_000, 5, 1e10), timing(12_500, 40, 1e10)], timing(60_000, 40, 5e9));
    expect(rates.factorColumnSeconds).toBeCloseTo(3e-9, 20);
    expect(rates.factorBytesPerSecondInCache).toBeCloseTo(1e10, 0);
    expect(rates.factorBytesPerSecond).toBeCloseTo(5e9, 0);
  });

  it('prices entries alone by the long band when noise makes the column cost negative', () => {
    const short = { ...timing(100_000, 5, 1e10), seconds: 1e-4 };
    const long = timing(12_500, 40, 1e10);
    const rates = factorSolveRates([short, long], timing(60_000, 40, 5e9));
    expect(rates.factorColumnSeconds).toBe(0);
    expect(rates.factorBytesPerSecondInCache).toBeCloseTo((24 * (40 * 12_500 - 780)) / long.seconds, 0);
  });
});

describeEachBackend('measureCalibration', () => {
  it('measures positive throughputs with an injected clock', () => {
    let t = 0;
    const clock = { now: () => (t += 1), iso: () => 'then' };
    const c = measureCalibration(clock, 3);
    // Every timing is 1 ms with this clock: the rates are the work per millisecond.
    expect(c.flopsPerSecond).toBeCloseTo(((4 * 40 * 2 ** 20) / 8) * 1000, 3);
    expect(c.flopsPerSecondInCache).toBeCloseTo(((4 * 8 * 2 ** 20) / 8) * 1000, 3);
    // The two product passes, 2 flops an entry each, in one timing.
    expect(c.productFlopsPerSecond).toBeCloseTo(((4 * 40 * 2 ** 20) / 8) * 1000, 3);
    expect(c.productFlopsPerSecondInCache).toBeCloseTo(((4 * 8 * 2 ** 20) / 8) * 1000, 3);
    // The solve and the combination over a triangle of 128 rows (128 x 129 / 2 entries each), 16 times in one timing.
    expect(c.triangleEntrySeconds).toBeCloseTo(1e-3 / 16 / (128 * 129), 15);
    // A calibration row holds 88 bytes (5 entries of 12, its pointer, b, x, the term), 60 of them the matrix's.
    expect(c.bytesPerSecond).toBeCloseTo(60 * Math.floor((40 * 2 ** 20) / 88) * 1000, 3);
    expect(c.bytesPerSecondInCache).toBeCloseTo(60 * Math.floor((8 * 2 ** 20) / 88) * 1000, 3);
    // The projections' two loops read the rows' 60 bytes each.
    expect(c.csrLoopBytesPerSecondInCache).toBeCloseTo(120 * Math.floor((8 * 2 ** 20) / 88) * 1000, 3);
    // Both bands' solves take 1 ms, so the factor of 40 entries a column (a fifth of the rows, the last 39 columns
    // short) reads fewer bytes in the same time: no cost per column, its bytes per millisecond.
    expect(c.factorColumnSeconds).toBe(0);
    const rows40 = Math.floor((5 * Math.floor((40 * 2 ** 20) / 88)) / 40);
    expect(c.factorBytesPerSecond).toBeCloseTo(24 * (40 * rows40 - 780) * 1000, 3);
    expect([c.inCacheBytes, c.outOfCacheBytes]).toEqual([8 * 2 ** 20, 40 * 2 ** 20]);
    // D-HBM's update over 250,000 entries (40 bytes each) in one timing; the step as the backend runs it (the addon's
    // native, the TypeScript loops otherwise) also sums a term (16 bytes an entry).
    expect(c.vectorBytesPerSecond).toBeCloseTo(40 * 250_000 * 1000, 3);
    expect(c.stepBytesPerSecond).toBeCloseTo(56 * 250_000 * 1000, 3);
    // The consensus loop's 250,000 entries in one timing.
    expect(c.consensusEntrySeconds).toBeCloseTo(1e-3 / 250_000, 15);
    // 1000 calls in one timing.
    expect(c.perMachineOverheadSeconds).toBeCloseTo(1e-6, 12);
    expect(c.threadStartSeconds).toBeGreaterThan(0);
    expect(c.measuredAt).toBe('then');
    // Every algorithm's fixed costs on both storages: with this clock 1 ms an iteration, less the tiny systems' kernel work.
    const overheads = c.overheads;
    if (overheads === null) throw new Error('no overheads measured');
    expect(Object.keys(overheads ?? {}).sort()).toEqual([...ALGORITHM_IDS].sort());
    for (const { dense, csr } of Object.values(overheads))
      for (const f of [dense, csr]) {
        expect(f.perIteration + 2 * f.perMachine).toBeGreaterThan(0.9e-3);
        expect(f.perIteration + 2 * f.perMachine).toBeLessThanOrEqual(1e-3);
      }
  });
});

describe('measureCalibration with threads forced on every run (2 threads, no work threshold)', () => {
  forceThreads(2, 'typescript', false);

  it('prices the fixed costs on one thread (tiny systems): it starts no worker thread, and leaves the threshold as it was', async () => {
    await allWorkersExited(runningSolverWorkers);
    const startedBefore = lastThreadStartSeconds();
    let t = 0;
    const clock = { now: () => (t += 1), iso: () => 'then' };
    // The calibration measures the fixed costs (measureOverheads) last.
    const { overheads } = measureCalibration(clock, 1);
    // A worker started and ended in these synchronous calls would still be running: exits are seen on the event loop.
    expect(runningSolverWorkers()).toBe(0);
    expect(lastThreadStartSeconds()).toBe(startedBefore);
    expect(Object.keys(overheads ?? {}).sort()).toEqual([...ALGORITHM_IDS].sort());
    expect(parallelMinWork()).toBe(0);
  });
});
