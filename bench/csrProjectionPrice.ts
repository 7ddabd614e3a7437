/**
 * What the time-to-solution model prices the pieces of a CSR projection iteration at, against what they
 * take: the solves with each sampled machine's Gram factor L_i (both sweeps, ../src/solvers/machines/placement.ts
 * currentThreadGramSolver) and the loops A_i v, A_i^T y (../src/solvers/linalg/csrKernels.ts), each timed on
 * the calling thread (the mean of 400 calls after 50) against the in-cache price of this process'
 * calibration (factor bytes and columns: ../src/solvers/analysis/calibration.ts factorSolveRates); then APC's
 * taskmaster (../src/solvers/machines/csrConsensusPass.ts: the measure-and-advance loop, the sum of the
 * estimates, and xbar's average) against the model's price for it. Run alone:
 *   node --import tsx bench/csrProjectionPrice.ts <typescript|native> [--k 200] [--m 20]
 * on the 2-D Poisson matrix of a k x k grid split into m contiguous machines (the time-to-solution bench's CSR problem).
 */
import { parseArgs } from 'node:util';
import { buildDistributedSystem, createProblem } from '../src/solvers/index.js';
import { measureCalibration } from '../src/solvers/analysis/calibration.js';
import { iterationCost, systemCost } from '../src/solvers/analysis/timeToSolution.js';
import { CsrConsensusPass } from '../src/solvers/machines/csrConsensusPass.js';
import { csrAddTranspose, csrRowProducts } from '../src/solvers/linalg/csrKernels.js';
import { currentThreadGramSolver } from '../src/solvers/machines/placement.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend, type BackendName } from './backends.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { k: { type: 'string', default: '200' }, m: { type: 'string', default: '20' } },
});
const backend = (positionals[0] ?? 'native') as BackendName;
console.log(JSON.stringify(selectBackend(backend)));
const m = Number(values.m);
const system = buildDistributedSystem(createProblem({ A: poisson2d(Number(values.k)), partition: { machines: m } }));
if (system.storage !== 'csr') throw new Error('expected a CSR system');
const calibration = measureCalibration();
const { factorColumnSeconds, factorBytesPerSecondInCache, csrLoopBytesPerSecondInCache } = calibration;
console.log(
  `calibration: factor ${(factorBytesPerSecondInCache / 1e9).toFixed(2)} GB/s and ${(factorColumnSeconds * 1e9).toFixed(2)} ns a column (in cache), loops ${(csrLoopBytesPerSecondInCache / 1e9).toFixed(2)} GB/s`,
);

function meanSeconds(run: () => void): number {
  for (let r = 0; r < 50; r++) run();
  const calls = 400;
  const start = performance.now();
  for (let r = 0; r < calls; r++) run();
  return (performance.now() - start) / 1000 / calls;
}

for (const i of [0, Math.floor(m / 2), m - 1]) {
  const d = system.machines[i];
  const { nnzL } = d.gram.symbolic;
  const solver = currentThreadGramSolver(d.gram);
  const b = new Float64Array(d.p).fill(1);
  const x = new Float64Array(d.p);
  const solve = meanSeconds(() => solver.solve(b, x));
  const solvePrice = (2 * 12 * nnzL) / factorBytesPerSecondInCache + 2 * d.p * factorColumnSeconds;
  const a = { p: d.p, rowPtr: d.a.rowPtr, colIdx: d.a.colIdx, values: d.a.values };
  const v = new Float64Array(d.c).fill(1);
  const loops = meanSeconds(() => {
    csrRowProducts(a, v, null, x);
    csrAddTranspose(a, x, 0, -1e-3, v, 0, null);
  });
  const nnzA = d.a.rowPtr[d.p];
  const loopsPrice = (2 * 12 * nnzA) / csrLoopBytesPerSecondInCache;
  const us = (s: number): string => `${(s * 1e6).toFixed(1)} us`;
  console.log(
    `machine ${i}: p ${d.p}, nnz(L_i) ${nnzL} (${(nnzL / d.p).toFixed(1)} a column): solve ${us(solve)}, priced ${us(solvePrice)} (${(solvePrice / solve).toFixed(2)}); ` +
      `loops over nnz(A_i) ${nnzA}: ${us(loops)}, priced ${us(loopsPrice)} (${(loopsPrice / loops).toFixed(2)})`,
  );
}

{
  // APC's taskmaster after a pass: measure and advance (the pass's terms as given), the sum, xbar's average.
  const pass = new CsrConsensusPass(system, 0.9);
  try {
    pass.start();
    pass.run();
    const terms = pass.lastTerms();
    const sum = new Float64Array(system.n);
    const xbar = new Float64Array(system.n);
    const seconds = meanSeconds(() => {
      pass.measureAndAdvance(terms);
      pass.sumOfEstimates(sum);
      for (let j = 0; j < xbar.length; j++) xbar[j] = (0.9 / m) * sum[j] + 0.1 * xbar[j];
    });
    const { taskmaster } = iterationCost('apc', systemCost(system));
    const price =
      taskmaster.vectorBytes / calibration.vectorBytesPerSecond + taskmaster.consensusEntries * calibration.consensusEntrySeconds;
    console.log(
      `APC's taskmaster: ${(seconds * 1e6).toFixed(1)} us, priced ${(price * 1e6).toFixed(1)} us (${(price / seconds).toFixed(2)}; ` +
        `${taskmaster.consensusEntries} consensus entries at ${(calibration.consensusEntrySeconds * 1e9).toFixed(2)} ns)`,
    );
  } finally {
    pass.dispose();
  }
}
