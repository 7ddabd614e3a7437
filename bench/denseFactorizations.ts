/**
 * The dense factorizations of one bench problem on one backend, each timed alone (wall and CPU
 * seconds, best of `--repeats`): the setup (partition + a thin QR of each A_i^T), the LU of A, the
 * Lanczos on (A^T A)^{-1} through its triangular solves (and one pair of solves), and the whole
 * kappa(A^T A). A quick check of a factorization change without the rest of bench/stages.ts.
 *
 *   node --import tsx bench/denseFactorizations.ts <problem.json> [typescript|native] [--repeats 3] [--gemm native]
 *
 * --gemm native: the TypeScript factorizations with OpenBLAS's dgemm as their product, i.e. what
 * they cost once the TypeScript gemm is as fast (the rest of their work stays in TypeScript).
 */
import { readFileSync } from 'node:fs';
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { inverseNormalOperatorOf, matrixConditioningWork } from '../src/solvers/analysis/conditioning.js';
import { lanczosWork } from '../src/solvers/eigen/lanczos.js';
import { luFactor } from '../src/solvers/linalg/lu.js';
import { nativeBlas } from '../src/solvers/linalg/backend.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { nativeDenseKernelsOf } from '../src/solvers/linalg/nativeDenseKernels.js';
import { TYPESCRIPT_DENSE_KERNELS } from '../src/solvers/linalg/typescriptDenseKernels.js';
import { selectBackend } from './backends.js';
import { readRaw } from './stageIo.js';
import type { ProblemFile } from './common.js';

function best<T>(repeats: number, fn: () => T): { wall: number; cpu: number; result: T } {
  let wall = Infinity;
  let cpu = Infinity;
  let result!: T;
  for (let r = 0; r < repeats; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    result = fn();
    const t = (performance.now() - t0) / 1e3;
    const c = process.cpuUsage(c0);
    wall = Math.min(wall, t);
    cpu = Math.min(cpu, (c.user + c.system) / 1e6);
  }
  return { wall, cpu, result };
}

function main(): void {
  const args = process.argv.slice(2);
  const problemPath = args[0];
  const backend = args[1] === 'native' ? 'native' : 'typescript';
  const repeatsAt = args.indexOf('--repeats');
  const repeats = repeatsAt >= 0 ? Number(args[repeatsAt + 1]) : 3;
  const spec = JSON.parse(readFileSync(problemPath, 'utf8')) as ProblemFile;
  selectBackend(backend);
  const gemmAt = args.indexOf('--gemm');
  const nativeGemm = gemmAt >= 0 && args[gemmAt + 1] === 'native';
  if (nativeGemm) {
    const blas = nativeBlas();
    if (!blas) throw new Error('--gemm native needs the addon');
    const native = nativeDenseKernelsOf(blas);
    TYPESCRIPT_DENSE_KERNELS.gemm = (...product) => native.gemm(...product);
  }
  const kernels = selectedKernels();
  const { n, m } = spec;
  const A = { rows: n, cols: n, data: readRaw(spec.matrixFile, new Float64Array(n * n)) };
  const assignment = readRaw(spec.assignmentFile, new Int32Array(n));
  const problem = createProblem({ A, partition: partitionFromAssignment(assignment, m) });
  // Warm-up (JIT): the same stages once on a small leading block.
  const small = 96;
  const warm = { rows: small, cols: small, data: new Float64Array(small * small) };
  for (let i = 0; i < small; i++) warm.data.set(A.data.subarray(i * n, i * n + small), i * small);
  for (let i = 0; i < small; i++) warm.data[i * small + i] += small;
  runSync(matrixConditioningWork(kernels, warm));
  luFactor(warm);

  const setup = best(repeats, () => buildDistributedSystem(problem));
  const lu = best(repeats, () => luFactor(A, {}, kernels));
  const f = lu.result;
  const op = inverseNormalOperatorOf(f);
  const x = new Float64Array(n).fill(1);
  const y = new Float64Array(n);
  const solves = best(Math.max(repeats, 10), () => op.apply(x, y));
  const inverse = best(repeats, () => runSync(lanczosWork(kernels, op, { which: 'largest', maxIterations: 600 })));
  const kappa = best(repeats, () => runSync(matrixConditioningWork(kernels, A)));
  const row = (name: string, t: { wall: number; cpu: number }): string =>
    `${name.padEnd(34)} ${t.wall.toFixed(3)} s wall  ${t.cpu.toFixed(3)} s cpu`;
  console.log(`${spec.name} (n = ${n}, m = ${m}), ${backend}${nativeGemm ? ' with OpenBLAS dgemm' : ''}, best of ${repeats}`);
  console.log(row('setup (partition + thin QRs)', setup));
  console.log(row('LU of A', lu));
  console.log(row('one (A^T A)^{-1} x (4 tri. solves)', solves));
  console.log(row(`Lanczos on (A^T A)^{-1} (${inverse.result.iterations} steps)`, inverse));
  console.log(row('kappa(A^T A) (all of it)', kappa));
  console.log(`kappa(A^T A) = ${kappa.result.kappaAtA.toPrecision(12)}, zero pivot column ${f.zeroPivotColumn}`);
}

main();
