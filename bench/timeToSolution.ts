/**
 * Time to solution (issue 25 §1): the model's predicted seconds per iteration against the runner's
 * measured wallTimeMs / iterations, on one backend, for all six algorithms, and for runs to 1e-8
 * the predicted against the measured time. Run alone (a few minutes):
 *   node --import tsx bench/timeToSolution.ts <typescript|native> [--dense-n 1000] [--dense-m 10] [--csr-k 200] [--csr-m 20] [--iterations 100]
 * Prints one row per problem and algorithm: predicted and measured ms per iteration and their ratio.
 */
import { parseArgs } from 'node:util';
import {
  analyze,
  buildDistributedSystem,
  createProblem,
  DEFAULT_TRACE_CAP,
  generateMatrix,
  runAlgorithm,
  spectralDataOf,
  type CsrMatrix,
  type DenseMatrix,
} from '../src/solvers/index.js';
import { ALGORITHM_IDS } from '../src/solvers/algorithms/registry.js';
import { systemCost, timeToSolution } from '../src/solvers/analysis/timeToSolution.js';
import { measureCalibration } from '../src/solvers/machines/placement.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend, type BackendName } from './backends.js';

function measure(name: string, A: DenseMatrix | CsrMatrix, m: number, iterations: number, converge: number): void {
  const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
  const analysis = analyze(system);
  const spectral = spectralDataOf(analysis);
  const calibration = measureCalibration();
  const t = timeToSolution({ system: systemCost(system), rates: analysis.rates, tolerance: 1e-8, calibration });
  console.log(
    `${name}: calibration flops ${(calibration.flopsPerSecond / 1e9).toFixed(2)} GFLOP/s, CSR ${(calibration.bytesPerSecond / 1e9).toFixed(2)} GB/s, vectors ${(calibration.vectorBytesPerSecond / 1e9).toFixed(2)} GB/s, call ${(calibration.perMachineOverheadSeconds * 1e6).toFixed(1)} us`,
  );
  for (const id of ALGORITHM_IDS) {
    const run = runAlgorithm(system, id, spectral, { tolerance: 1e-300, maxIterations: iterations, traceCap: DEFAULT_TRACE_CAP });
    const measured = run.wallTimeMs / 1000 / run.iterations;
    const predicted = t[id].secondsPerIteration;
    let full = '';
    if (id === 'apc' || id === 'dhbm') {
      const solve = runAlgorithm(system, id, spectral, { tolerance: 1e-8, maxIterations: converge, traceCap: DEFAULT_TRACE_CAP });
      if (solve.status === 'converged' && t[id].seconds !== null) {
        full = `  to 1e-8: predicted ${t[id].iterations} it ${(t[id].seconds * 1000).toFixed(1)} ms, measured ${solve.iterations} it ${solve.wallTimeMs.toFixed(1)} ms, ratio ${(t[id].seconds / (solve.wallTimeMs / 1000)).toFixed(2)}`;
      } else full = `  to 1e-8: ${solve.status} after ${solve.iterations} (predicted ${String(t[id].iterations)})`;
    }
    console.log(
      `  ${id.padEnd(8)} predicted ${(predicted * 1000).toFixed(3)} ms/it, measured ${(measured * 1000).toFixed(3)} ms/it (threads ${run.threads ?? 1}), ratio ${(predicted / measured).toFixed(2)}${full}`,
    );
  }
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'dense-n': { type: 'string', default: '1000' },
      'dense-m': { type: 'string', default: '10' },
      'csr-k': { type: 'string', default: '200' },
      'csr-m': { type: 'string', default: '20' },
      iterations: { type: 'string', default: '100' },
      converge: { type: 'string', default: '5000' },
    },
  });
  const backend = (positionals[0] ?? 'typescript') as BackendName;
  console.log(JSON.stringify(selectBackend(backend)));
  const iterations = Number(values.iterations);
  const converge = Number(values.converge);
  const n = Number(values['dense-n']);
  measure(
    `dense gaussian n=${n} m=${values['dense-m']}`,
    generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed: 1 }),
    Number(values['dense-m']),
    iterations,
    converge,
  );
  const k = Number(values['csr-k']);
  measure(`CSR Poisson n=${k * k} m=${values['csr-m']}`, poisson2d(k), Number(values['csr-m']), iterations, converge);
}

main();
