/**
 * The benchmark's sparse problems and their cache: each matrix is written once per run as raw CSR
 * (row pointers and column indices int32, values float64, little-endian) with its row -> machine
 * assignment (contiguous strips, as the API's { machines: m }) and a `<problem>.json`, so
 * bench/sparseStages.ts and bench/reference.py (its sparse branch) time exactly the same matrix.
 */
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPartition, type CsrMatrix } from '../src/solvers/index.js';
import { convectionDiffusion2d, poisson2d } from '../src/solvers/sparse/generators.js';
import { readMatrixMarketStream } from '../src/solvers/sparse/matrixMarketStream.js';
import type { RepetitionPolicy } from './problems.js';

/** Cell Péclet scale of the convection-diffusion family (as the sparse analysis tests use). */
export const PECLET = 50;

export interface SparseProblemDefinition {
  /** e.g. poisson-n1000000-m100, convdiff-n250000-m100, sherman5-m10. */
  name: string;
  m: number;
  /** Human-readable origin, for the report. */
  label: string;
  matrix: () => Promise<CsrMatrix>;
}

/** sparse.json: the sparse counterpart of problem.json, read by bench/sparseStages.ts and bench/reference.py. */
export interface SparseProblemFile {
  storage: 'csr';
  name: string;
  label: string;
  n: number;
  nnz: number;
  m: number;
  rowPtrFile: string;
  colIdxFile: string;
  valuesFile: string;
  assignmentFile: string;
  /** Run the whole analysis on both sides (skipped above --sparse-analysis-max-n). */
  analysis: boolean;
  iterationWarmup: number;
  iterationRepeats: number;
  expensiveRepeats: number;
}

function gridSide(n: number, name: string): number {
  const k = Math.round(Math.sqrt(n));
  if (k * k !== n) throw new Error(`${name}: n = ${n} is not a square (the grid is k x k)`);
  return k;
}

export function poissonProblem(n: number, m: number): SparseProblemDefinition {
  const k = gridSide(n, 'poisson');
  return { name: `poisson-n${n}-m${m}`, m, label: `2-D Poisson, ${k} x ${k} grid`, matrix: () => Promise.resolve(poisson2d(k)) };
}

export function convectionDiffusionProblem(n: number, m: number): SparseProblemDefinition {
  const k = gridSide(n, 'convdiff');
  return {
    name: `convdiff-n${n}-m${m}`,
    m,
    label: `2-D convection-diffusion, ${k} x ${k} grid, Péclet ${PECLET}`,
    matrix: () => Promise.resolve(convectionDiffusion2d(k, PECLET)),
  };
}

/** A Matrix Market file of the reference matrices, read as CSR by the service's streaming reader. */
export function sparseFileProblem(file: string, matricesDir: string, m: number): SparseProblemDefinition {
  const base = file.replace(/\.mtx$/, '');
  return {
    name: `${base}-csr-m${m}`,
    m,
    label: `${base} (Matrix Market)`,
    matrix: async () => (await readMatrixMarketStream(createReadStream(join(matricesDir, file)))).matrix,
  };
}

/** The sparse problems of `npm run bench` (issue 11 §5) and of `--quick`. */
export function defaultSparseProblems(matricesDir: string, quick: boolean): SparseProblemDefinition[] {
  if (quick) return [poissonProblem(10_000, 10), convectionDiffusionProblem(2_500, 10), sparseFileProblem('sherman5.mtx', matricesDir, 10)];
  return [
    sparseFileProblem('1138_bus.mtx', matricesDir, 10),
    sparseFileProblem('sherman5.mtx', matricesDir, 10),
    sparseFileProblem('fs1831.mtx', matricesDir, 10),
    convectionDiffusionProblem(250_000, 100),
    poissonProblem(1_000_000, 100),
  ];
}

/** poisson-n<N>-m<M>, convdiff-n<N>-m<M> or <matrix>-csr-m<M>. */
export function sparseProblemByName(name: string, matricesDir: string): SparseProblemDefinition {
  const grid = /^(poisson|convdiff)-n(\d+)-m(\d+)$/.exec(name);
  if (grid) return (grid[1] === 'poisson' ? poissonProblem : convectionDiffusionProblem)(Number(grid[2]), Number(grid[3]));
  const file = /^(.+)-csr-m(\d+)$/.exec(name);
  if (file) return sparseFileProblem(`${file[1]}.mtx`, matricesDir, Number(file[2]));
  throw new Error(`unknown sparse problem ${name}: expected poisson-n<N>-m<M>, convdiff-n<N>-m<M> or <matrix>-csr-m<M>`);
}

const bytesOf = (a: Int32Array | Float64Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Writes the CSR arrays, assignment and sparse.json of `problem` under cacheDir. */
export async function writeSparseProblemCache(
  problem: SparseProblemDefinition,
  cacheDir: string,
  policy: RepetitionPolicy,
  analysisMaxN: number,
): Promise<{ path: string; spec: SparseProblemFile }> {
  mkdirSync(cacheDir, { recursive: true });
  const A = await problem.matrix();
  const n = A.rows;
  const assignment = buildPartition({ machines: problem.m }, n).assignment;
  const file = (suffix: string): string => join(cacheDir, `${problem.name}.${suffix}`);
  writeFileSync(file('rowptr.i32'), bytesOf(A.rowPtr));
  writeFileSync(file('colidx.i32'), bytesOf(A.colIdx));
  writeFileSync(file('values.f64'), bytesOf(A.values));
  writeFileSync(file('assignment.i32'), bytesOf(assignment));
  const scale = (count: number): number => Math.max(1, Math.round(count * policy.repeatScale));
  const spec: SparseProblemFile = {
    storage: 'csr',
    name: problem.name,
    label: problem.label,
    n,
    nnz: A.rowPtr[n],
    m: problem.m,
    rowPtrFile: file('rowptr.i32'),
    colIdxFile: file('colidx.i32'),
    valuesFile: file('values.f64'),
    assignmentFile: file('assignment.i32'),
    analysis: n <= analysisMaxN,
    iterationWarmup: 3,
    iterationRepeats: scale(n >= 500_000 ? 5 : 20),
    expensiveRepeats: scale(n <= 20_000 ? 3 : 1),
  };
  const path = file('sparse.json');
  writeFileSync(path, `${JSON.stringify(spec, null, 2)}\n`);
  return { path, spec };
}
