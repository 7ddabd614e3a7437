/**
 * The threads' slowdown a threaded run measures for the time-to-solution model (src/solvers/parallel/engine.ts
 * lastThreadSlowdown): a method's run on dense machines, long enough, runs a few phases on the calling thread alone
 * and keeps the ratio of its threaded phases' busy time to theirs; the iterates are those of one thread all the same,
 * and the calibration prices threaded dense phases by it. A file of its own: the measurement is once per process
 * every 10 minutes.
 */
import { describe, expect, it } from 'vitest';
import { currentCalibration } from '../../../src/solvers/analysis/calibration.js';
import { lastThreadSlowdown, runningSolverWorkers } from '../../../src/solvers/parallel/engine.js';
import { setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { allWorkersExited, forceThreads, wellConditionedSystem } from './support.js';

describe("the threads' slowdown", () => {
  forceThreads(2);
  const t = wellConditionedSystem(80, 4, 21);
  const options = { tolerance: 1e-300, maxIterations: 120, stopOnStagnation: false, divergenceTolerance: 1e300 };

  it('is measured by a long enough threaded run on dense machines, whose iterates are still those of one thread', async () => {
    expect(lastThreadSlowdown('dense')).toBeNull();
    const short = runAlgorithm(t.system, 'dhbm', t.spectral, { ...options, maxIterations: 20 });
    expect(short.threads).toBe(2);
    // At most 2 phases an iteration: fewer than the solo phases start after (50).
    expect(lastThreadSlowdown('dense')).toBeNull();
    const threaded = runAlgorithm(t.system, 'dhbm', t.spectral, options);
    expect(threaded.threads).toBe(2);
    const slowdown = lastThreadSlowdown('dense');
    expect(slowdown).not.toBeNull();
    expect(Number.isFinite(slowdown)).toBe(true);
    expect(slowdown!).toBeGreaterThan(0);
    // Nothing on CSR machines was run.
    expect(lastThreadSlowdown('csr')).toBeNull();
    setSolverThreads(1);
    const single = runAlgorithm(t.system, 'dhbm', t.spectral, options);
    setSolverThreads(2);
    expect(single.threads).toBe(1);
    expect(Array.from(threaded.solution)).toEqual(Array.from(single.solution));
    // The calibration prices threaded dense phases by it, CSR ones by 1 (none measured).
    expect(currentCalibration().threadSlowdown).toEqual({ dense: slowdown, csr: 1 });
    await allWorkersExited(runningSolverWorkers);
  });
});
