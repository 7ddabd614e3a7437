/**
 * Property: APC run with gamma and eta swapped is detected as divergence, never reported as success.
 *
 * Why the preconditions: the characteristic quadratic of APC is symmetric in (gamma, eta); only the
 * extra eigenvalue 1 - gamma of the machines' null-space modes is not, and those modes exist only
 * for m >= 3 ((m - 2) n of them). Swapped, that eigenvalue is 1 - eta*, outside the unit disk
 * exactly when eta* > 2. So for m = 2 the swap is harmless (same rate) and is not a failure to
 * detect; we require m >= 3 and eta* >= 2.1 so the growth (>= 1.1 per step) surfaces well within
 * the iteration budget from the initial state.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { algorithms } from '../../../src/solvers/algorithms/registry.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { randomCase, referenceMetrics, systemFromRows } from '../algorithms/support.js';

describe('APC with swapped parameters', () => {
  it('ends diverged (never converged) on random matrices and random partitions with m >= 3', () => {
    let checked = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 5 }),
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom(0.05, 0.3, 1),
        (m, extraRows, seed, sigma) => {
          const c = randomCase(m + 3 + extraRows, m, seed, sigma);
          const ref = referenceMetrics(c);
          const { gamma, eta } = algorithms.apc.optimal(ref.spectral).parameters;
          fc.pre(eta >= 2.1);
          checked++;
          const system = systemFromRows(c.rows, c.assignment);
          const run = runAlgorithm(system, 'apc', ref.spectral, {
            tolerance: 1e-10,
            maxIterations: 20_000,
            parameters: { gamma: eta, eta: gamma },
          });
          expect(run.status).toBe('diverged');
        },
      ),
      { numRuns: 60 },
    );
    expect(checked).toBeGreaterThan(30);
  });
});
