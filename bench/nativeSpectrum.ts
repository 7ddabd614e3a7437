/**
 * Measurement (not a test): lambda_max(A^T A) of the convection-diffusion matrix (Peclet 50, n = k^2)
 * to a relative bound of 1e-8 by the TypeScript thick-restart Lanczos and, on the native backend,
 * by ARPACK (src/solvers/eigen/arpackLanczos.ts): CPU time (all threads) and wall time, products,
 * bound; `rounds` alternations.
 *
 *   npx tsx bench/nativeSpectrum.ts [k = 200] [rounds = 2]
 */
import { useBackend } from '../src/solvers/linalg/backend.js';
import { convectionDiffusion2d } from '../src/solvers/sparse/generators.js';
import { normalOperatorOfSparse } from '../src/solvers/sparse/normalOperators.js';
import { largestEigenvalue } from '../src/solvers/eigen/lanczos.js';

const [k = 200, rounds = 2] = process.argv.slice(2).map(Number);
const op = normalOperatorOfSparse(convectionDiffusion2d(k, 50));
const rows: Record<string, unknown>[] = [];
for (let round = 0; round < rounds; round++) {
  for (const backend of ['typescript', 'native'] as const) {
    useBackend(backend);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const e = largestEigenvalue(op, { tolerance: 1e-8 });
    const cpu = process.cpuUsage(cpu0);
    rows.push({
      backend,
      n: op.size,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      wallMs: Math.round(performance.now() - t0),
      value: e.value,
      products: e.iterations,
      bound: e.relativeErrorBound.toExponential(2),
    });
  }
}
console.table(rows);
