/**
 * The LU of A that the sparse analysis and the advisor factor once (shift-invert at 0), by route, on one
 * sparse benchmark problem: the TypeScript backend's default (Cholesky for a symmetric positive
 * definite A, ../src/solvers/sparse/positiveDefiniteLu.ts; the pivoting LU otherwise), the pivoting LU
 * itself (--pivoting: the left-looking LU with the symmetric strategy's threshold), and the native
 * backend's (CHOLMOD for a symmetric positive definite A, UMFPACK otherwise) when the addon is built. Wall seconds and the entries of L + U of each; one JSON line.
 *
 *   node --import tsx bench/sparseLuProfile.ts <sparse.json> [--pivoting]
 */
import { readFileSync } from 'node:fs';
import { runSync } from '../src/solvers/cooperative.js';
import { currentThreadSparseLuWork } from '../src/solvers/machines/placement.js';
import { factorNonzeros, sparseLu, type SparseLuFactorization } from '../src/solvers/sparse/sparseLu.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const [path, ...flags] = process.argv.slice(2);
if (!path) throw new Error('usage: sparseLuProfile.ts <sparse.json> [--pivoting]');
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
const { A } = readSparseProblemArrays(spec);

function timed(factor: () => SparseLuFactorization): { seconds: number; ordering: string; factorNonzeros: number } {
  const t0 = performance.now();
  const f = factor();
  return { seconds: (performance.now() - t0) / 1e3, ordering: f.ordering, factorNonzeros: factorNonzeros(f) };
}

const routes: Record<string, unknown> = {};
selectBackend('typescript');
routes.typescript = timed(() => runSync(currentThreadSparseLuWork(A)));
if (flags.includes('--pivoting')) routes.pivoting = timed(() => sparseLu(A, { pivotThreshold: 0.1 }));
try {
  selectBackend('native');
  routes.native = timed(() => runSync(currentThreadSparseLuWork(A)));
} catch (error) {
  routes.native = `unavailable: ${(error as Error).message}`;
}
console.log(JSON.stringify({ problem: spec.name, n: A.rows, nnz: A.rowPtr[A.rows], routes }));
