/**
 * Measurement (not a test): the principal angles of Gaussian systems on the TypeScript kernels with
 * each way of finding sigma_max of a Gram block (Kernels.blockSigmaMax, src/solvers/linalg/kernels.ts):
 * Lanczos (the TypeScript kernels' choice) against bidiagonalization (the native kernels'), best of
 * three wall times, and the difference of their theta_H.
 *
 *   npx tsx bench/blockSigmaMax.ts
 */
import { computePrincipalAngles } from '../src/solvers/analysis/principalAngles.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { TYPESCRIPT_KERNELS, type Kernels } from '../src/solvers/linalg/kernels.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { SeededRandom } from '../src/solvers/random.js';

const bidiagonalization: Kernels = { ...TYPESCRIPT_KERNELS, blockSigmaMax: 'bidiagonalization' };

for (const [n, m] of [
  [400, 2],
  [800, 2],
  [800, 8],
  [1200, 4],
] as const) {
  for (const mean of [0, 1]) {
    const rng = new SeededRandom(3);
    const data = Float64Array.from({ length: n * n }, () => mean + rng.nextNormal());
    const assignment = Int32Array.from({ length: n }, (_, k) => Math.floor((k * m) / n));
    const problem = { n, A: { rows: n, cols: n, data }, b: new Float64Array(n).fill(1), xTrue: null };
    const system = buildDistributedSystem({ ...problem, partition: partitionFromAssignment(assignment, m) }, TYPESCRIPT_KERNELS);
    const time = (kernels: Kernels): { ms: number; thetaH: number } => {
      let ms = Infinity;
      let thetaH = NaN;
      for (let rep = 0; rep < 3; rep++) {
        const start = performance.now();
        thetaH = computePrincipalAngles(system, kernels).thetaH;
        ms = Math.min(ms, performance.now() - start);
      }
      return { ms, thetaH };
    };
    const lanczos = time(TYPESCRIPT_KERNELS);
    const bidiagonal = time(bidiagonalization);
    console.log(
      JSON.stringify({
        n,
        m,
        mean,
        lanczosMs: Math.round(lanczos.ms),
        bidiagonalizationMs: Math.round(bidiagonal.ms),
        thetaHDifference: Math.abs(lanczos.thetaH - bidiagonal.thetaH),
      }),
    );
  }
}
