/**
 * Measurement (not a test): the tall sparse analysis' conditioning stage (L, mu by the normal equations' factor,
 * lambda_max(S), lambda_min(S) by conjugate-gradient solves; src/solvers/analysis/tallSparseAnalysis.ts) on the
 * native kernels with each `largeEigensolver` (src/solvers/linalg/kernels.ts), alternated `rounds` times: CPU
 * time (all threads), wall time, and each value with its reported bound.
 * The problem: a 2-D Poisson matrix stacked on a convection-diffusion one (Peclet 50), 2 k^2 x k^2, on m machines.
 *
 *   node --import tsx bench/tallEigensolver.ts [k = 150] [m = 8] [rounds = 2]
 */
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { tallSparseStagedPartsWork } from '../src/solvers/analysis/tallSparseAnalysis.js';
import { kernelsOf, type Kernels } from '../src/solvers/linalg/kernels.js';
import type { CsrMatrix } from '../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../src/solvers/sparse/generators.js';

function stacked(top: CsrMatrix, bottom: CsrMatrix): CsrMatrix {
  const nnzTop = top.rowPtr[top.rows];
  const nnz = nnzTop + bottom.rowPtr[bottom.rows];
  const rowPtr = new Int32Array(top.rows + bottom.rows + 1);
  rowPtr.set(top.rowPtr);
  for (let r = 1; r <= bottom.rows; r++) rowPtr[top.rows + r] = nnzTop + bottom.rowPtr[r];
  const colIdx = new Int32Array(nnz);
  colIdx.set(top.colIdx.subarray(0, nnzTop));
  colIdx.set(bottom.colIdx.subarray(0, nnz - nnzTop), nnzTop);
  const values = new Float64Array(nnz);
  values.set(top.values.subarray(0, nnzTop));
  values.set(bottom.values.subarray(0, nnz - nnzTop), nnzTop);
  return { rows: top.rows + bottom.rows, cols: top.cols, rowPtr, colIdx, values };
}

const [k = 150, m = 8, rounds = 2] = process.argv.slice(2).map(Number);
const A = stacked(poisson2d(k), convectionDiffusion2d(k, 50));
const rhs = new Float64Array(A.rows).fill(1);
const system = buildDistributedSystem(createProblem({ A, rhs, partition: { machines: m } }));
const native = kernelsOf('native');
if (native.backend !== 'native' || native.arpack === null) throw new Error('needs the native addon built with ARPACK');

const rows: Record<string, unknown>[] = [];
for (let round = 0; round < rounds; round++) {
  for (const largeEigensolver of ['thick-restart', 'arpack'] as const) {
    const kernels: Kernels = { ...native, largeEigensolver };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const { staged } = runSync(tallSparseStagedPartsWork(kernels, system));
    const cpu = process.cpuUsage(cpu0);
    const c = staged.conditioning;
    const e = c.estimates!;
    const row: Record<string, unknown> = {
      largeEigensolver,
      cpuS: ((cpu.user + cpu.system) / 1e6).toFixed(2),
      wallS: ((performance.now() - t0) / 1e3).toFixed(2),
    };
    for (const key of ['L', 'mu', 'lambdaMaxS', 'lambdaMinS'] as const) {
      row[key] = `${c[key].toPrecision(12)} +- ${e[key].relativeErrorBound?.toExponential(1)} (${e[key].iterations})`;
    }
    rows.push(row);
    console.error(JSON.stringify(row));
  }
}
console.log(`n = ${A.cols}, N = ${A.rows}, m = ${m}`);
console.table(rows);
