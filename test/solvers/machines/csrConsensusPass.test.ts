/**
 * APC's machines on CSR storage in the shared-y form (src/solvers/machines/csrConsensusPass.ts:
 * x_i(t) = y(t) + A_i^+ (b_i - A_i y(t)), no n-vector per machine) against the per-machine form
 * (ConsensusPass, each machine's own x_i, run on the same CSR rows and Gram factors): the same xbar,
 * residuals and consensus distances over 100 iterations, for APC's and MLM's parameters; APC exact
 * after one step on orthogonal machines (kappa(S) = 1); the state held is O(n + nnz), not m n.
 */
import { describe, expect, it } from 'vitest';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { ConsensusPass, createConsensusPass, type ConsensusMachines } from '../../../src/solvers/machines/consensusPass.js';
import { CsrConsensusPass } from '../../../src/solvers/machines/csrConsensusPass.js';
import type { DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { nnzOf } from '../../../src/solvers/sparse/csr.js';
import { permutedBlockDiagonal } from '../analysis/sparseExamples.js';

interface Observation {
  xbar: Float64Array;
  residual: number;
  consensus: number;
}

/** APC's taskmaster (src/solvers/algorithms/apc.ts) over `machines`: the observations after the start and each of `steps` steps. */
function observe(machines: ConsensusMachines, m: number, eta: number, steps: number): Observation[] {
  const n = machines.xbar.length;
  const sum = new Float64Array(n);
  const out: Observation[] = [];
  const record = (): void => {
    machines.run();
    out.push({ xbar: machines.xbar.slice(), residual: Math.sqrt(machines.residualNormSquared()), consensus: machines.consensusDistance() });
  };
  machines.start();
  machines.sumOfEstimates(sum);
  for (let j = 0; j < n; j++) machines.xbar[j] = sum[j] / m;
  record();
  for (let t = 0; t < steps; t++) {
    machines.sumOfEstimates(sum);
    for (let j = 0; j < n; j++) machines.xbar[j] = (eta / m) * sum[j] + (1 - eta) * machines.xbar[j];
    record();
  }
  machines.dispose();
  return out;
}

function relativeDifference(x: Float64Array, y: Float64Array): number {
  let d = 0;
  let s = 0;
  for (let j = 0; j < y.length; j++) {
    d += (x[j] - y[j]) ** 2;
    s += y[j] ** 2;
  }
  return Math.sqrt(d / Math.max(s, Number.MIN_VALUE));
}

function compare(system: DistributedSystem, gamma: number, eta: number): void {
  const shared = new CsrConsensusPass(system, gamma);
  const perMachine = new ConsensusPass(system, gamma);
  const a = observe(shared, system.m, eta, 100);
  const b = observe(perMachine, system.m, eta, 100);
  for (let t = 0; t < a.length; t++) {
    expect(relativeDifference(a[t].xbar, b[t].xbar), `xbar, step ${t}`).toBeLessThanOrEqual(1e-11);
    expect(Math.abs(a[t].residual - b[t].residual), `residual, step ${t}`).toBeLessThanOrEqual(1e-10 * b[t].residual + 1e-13);
    expect(Math.abs(a[t].consensus - b[t].consensus), `consensus, step ${t}`).toBeLessThanOrEqual(1e-9 * b[t].consensus + 1e-13);
  }
  // The iteration moved.
  expect(relativeDifference(a[100].xbar, a[0].xbar)).toBeGreaterThan(1e-3);
}

describe('APC on CSR without one n-vector per machine', () => {
  it('createConsensusPass picks the shared-y form on CSR and the per-machine form on dense storage', () => {
    const A = poisson2d(6);
    const sparse = buildDistributedSystem(createProblem({ A, partition: { machines: 3 } }));
    const pass = createConsensusPass(sparse, 1);
    expect(pass).toBeInstanceOf(CsrConsensusPass);
    pass.dispose();
  });

  for (const [label, A, m] of [
    ['2-D Poisson, n = 400, 5 strips', poisson2d(20), 5],
    ['convection-diffusion, n = 900, 7 strips', convectionDiffusion2d(30, 5), 7],
  ] as const) {
    it(`${label}: the same iterates, residuals and consensus distances as each machine keeping its x_i (APC and MLM)`, () => {
      const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
      compare(system, 1.3, 1.7);
      compare(system, 0.6, 1.2);
      compare(system, 1, 1); // MLM
    });
  }

  it('orthogonal machines (permuted block diagonal, kappa(S) = 1): APC exact after one step, every x_i = x* after two', () => {
    const { A, partition } = permutedBlockDiagonal(600, 5, 6, 3);
    const system = buildDistributedSystem(createProblem({ A, partition }));
    // S = I, mu = 1/m: gamma = 1, eta = m make both roots of APC's characteristic equation 0.
    const observations = observe(new CsrConsensusPass(system, 1), system.m, system.m, 3);
    const reference = observe(new ConsensusPass(system, 1), system.m, system.m, 3);
    const scale = Math.sqrt(reference[0].xbar.reduce((s, v) => s + v * v, 0));
    expect(observations[0].consensus).toBeGreaterThan(0.1 * scale);
    for (let t = 1; t < observations.length; t++) expect(observations[t].residual, `step ${t}`).toBeLessThanOrEqual(1e-12 * scale);
    expect(observations[1].consensus).toBeGreaterThan(1e-3 * scale);
    for (let t = 2; t < observations.length; t++) expect(observations[t].consensus, `step ${t}`).toBeLessThanOrEqual(1e-12 * scale);
    for (let t = 0; t < observations.length; t++) {
      expect(Math.abs(observations[t].consensus - reference[t].consensus), `step ${t}`).toBeLessThanOrEqual(1e-12 * scale);
    }
  });

  it('holds O(n + nnz) doubles, not m n: 2-D Poisson, n = 10,000, 100 strips', () => {
    const A = poisson2d(100);
    const system = buildDistributedSystem(createProblem({ A, partition: { machines: 100 } }));
    const pass = new CsrConsensusPass(system, 1);
    try {
      const n = A.rows;
      expect(pass.heldDoubles()).toBeLessThanOrEqual(2 * n + 2 * nnzOf(A));
      expect(pass.heldDoubles()).toBeLessThan((100 * n) / 10);
    } finally {
      pass.dispose();
    }
  });
});
