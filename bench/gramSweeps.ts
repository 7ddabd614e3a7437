/**
 * Measurement (not a test): the two sweeps of a machine's Gram factor solve, B^{-1} b = L^{-1} P b (forward: each
 * column's entries scattered, independent updates) and B^{-T} y = P^T L^{-T} y (backward: each column's entries summed,
 * ../src/solvers/sparse/sparseCholesky.ts backwardSweep, in four partial sums), on the machines of the 2-D Poisson
 * matrix in k x k-grid boxes (the graph partitioners' kind of partition: ~40 entries a column of L) or strips, on
 * each backend: microseconds a sweep (median of `rounds` passes over every machine). The backward sweep summed in one
 * running sum took ~1.5x the forward one natively (each addition waits for the last); in four, about the same.
 *
 *   node --import tsx bench/gramSweeps.ts [--side 200] [--boxes 4x5 | --strips 20] [--rounds 200]
 */
import { parseArgs } from 'node:util';
import { buildDistributedSystem, createProblem } from '../src/solvers/index.js';
import { nativeSparse, useBackend, type BackendName } from '../src/solvers/linalg/backend.js';
import { NativeGramSolver } from '../src/solvers/machines/nativeGram.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { solveLower, solveUpper } from '../src/solvers/sparse/sparseCholesky.js';

const { values } = parseArgs({
  options: {
    side: { type: 'string', default: '200' },
    boxes: { type: 'string', default: '4x5' },
    strips: { type: 'string' },
    rounds: { type: 'string', default: '200' },
  },
});
const side = Number(values.side);
const rounds = Number(values.rounds);
const n = side * side;
const assignment = new Array<number>(n);
let label: string;
if (values.strips !== undefined) {
  const m = Number(values.strips);
  for (let k = 0; k < n; k++) assignment[k] = Math.floor((k * m) / n);
  label = `${m} strips`;
} else {
  const [bx, by] = values.boxes.split('x').map(Number);
  for (let r = 0; r < side; r++)
    for (let c = 0; c < side; c++) assignment[r * side + c] = Math.floor((r * bx) / side) * by + Math.floor((c * by) / side);
  label = `${bx} x ${by} boxes`;
}
const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const backends: BackendName[] = nativeSparse() === null ? ['typescript'] : ['typescript', 'native'];
for (const backend of backends) {
  useBackend(backend);
  const system = buildDistributedSystem(createProblem({ A: poisson2d(side), partition: { assignment } }));
  if (system.storage !== 'csr') throw new Error('expected CSR storage');
  const factors = system.machines.map((machine) => machine.gram);
  const solvers = factors.map((factor) =>
    backend === 'native'
      ? new NativeGramSolver(nativeSparse()!, factor)
      : {
          solveLower: (b: Float64Array, y: Float64Array) => solveLower(factor, b, y),
          solveUpper: (y: Float64Array, x: Float64Array) => solveUpper(factor, y, x),
        },
  );
  const vectors = factors.map((factor) => Float64Array.from({ length: factor.symbolic.n }, (_, k) => Math.cos(k + 1)));
  const outs = vectors.map((v) => new Float64Array(v.length));
  const time = (sweep: (i: number) => void): number => {
    const samples: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const start = performance.now();
      for (let i = 0; i < solvers.length; i++) sweep(i);
      samples.push(((performance.now() - start) * 1e3) / solvers.length);
    }
    return median(samples);
  };
  const forward = time((i) => solvers[i].solveLower(vectors[i], outs[i]));
  const backward = time((i) => solvers[i].solveUpper(vectors[i], outs[i]));
  const nnzL = factors.reduce((s, f) => s + f.symbolic.nnzL, 0);
  const rows = factors.reduce((s, f) => s + f.symbolic.n, 0);
  console.log(
    JSON.stringify({
      backend,
      partition: `Poisson ${side} x ${side}, ${label}`,
      entriesPerColumn: Math.round((10 * nnzL) / rows) / 10,
      forwardMicroseconds: Math.round(forward * 10) / 10,
      backwardMicroseconds: Math.round(backward * 10) / 10,
      backwardOverForward: Math.round((100 * backward) / forward) / 100,
    }),
  );
}
