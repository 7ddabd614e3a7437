/**
 * The benchmark's problems and the cache both sides read them from: each problem's matrix is
 * written once per run as raw float64 (row-major) with its row -> machine assignment as raw int32
 * and a problem.json, so bench/stages.ts and bench/reference.py time exactly the same bytes.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPartition, generateMatrix, parseMatrixMarket, type DenseMatrix } from '../src/solvers/index.js';
import type { ProblemFile } from './common.js';

export type ProblemSource =
  { kind: 'gaussian'; n: number; mean: number; seed: number } | { kind: 'matrix-market'; file: string; path: string };

export interface ProblemDefinition {
  name: string;
  source: ProblemSource;
  m: number;
}

export const GAUSSIAN_SIZES = [250, 500, 1000, 2000];
export const GAUSSIAN_MACHINES = [10, 50];
export const REAL_MATRICES = ['olm1000.mtx', '1138_bus.mtx', 'sherman5.mtx'];
/** Machines for the real matrices (contiguous blocks, as the API's { machines }). */
export const REAL_MACHINES = 10;

export function gaussianProblem(n: number, m: number): ProblemDefinition {
  return { name: `gaussian-n${n}-m${m}`, source: { kind: 'gaussian', n, mean: 1, seed: 2024 + n + m }, m };
}

export function realProblem(file: string, matricesDir: string, m = REAL_MACHINES): ProblemDefinition {
  return { name: `${file.replace(/\.mtx$/, '')}-m${m}`, source: { kind: 'matrix-market', file, path: join(matricesDir, file) }, m };
}

/** Every problem of `npm run bench`, small to large. */
export function defaultProblems(matricesDir: string): ProblemDefinition[] {
  const gaussian = GAUSSIAN_SIZES.flatMap((n) => GAUSSIAN_MACHINES.map((m) => gaussianProblem(n, m)));
  return [...gaussian, ...REAL_MATRICES.map((file) => realProblem(file, matricesDir))];
}

/**
 * A problem by name: gaussian-n<N>-m<M>, or <matrix>-m<M> / <matrix>.mtx for a file in matricesDir.
 */
export function problemByName(name: string, matricesDir: string): ProblemDefinition {
  const gaussian = /^gaussian-n(\d+)-m(\d+)$/.exec(name);
  if (gaussian) return gaussianProblem(Number(gaussian[1]), Number(gaussian[2]));
  const real = /^(.+?)(?:\.mtx)?(?:-m(\d+))?$/.exec(name);
  if (real) return realProblem(`${real[1]}.mtx`, matricesDir, real[2] ? Number(real[2]) : REAL_MACHINES);
  throw new Error(`unknown problem ${name}`);
}

export function buildMatrixOf(source: ProblemSource): DenseMatrix {
  if (source.kind === 'gaussian')
    return generateMatrix({ generator: 'gaussian', n: source.n, mean: source.mean, std: 1, seed: source.seed });
  return parseMatrixMarket(readFileSync(source.path, 'utf8'));
}

export interface RepetitionPolicy {
  tolerance: number;
  maxSolveIterations: number;
  solveBudgetSeconds: number;
  /** Multiplies the default repetition counts (e.g. 0.2 for a quick run); at least one of each. */
  repeatScale: number;
}

/** Same counts on both sides; more repetitions where a run is cheap. */
export function repetitionsFor(
  n: number,
  policy: RepetitionPolicy,
): Pick<ProblemFile, 'iterationWarmup' | 'iterationWarmupSeconds' | 'iterationRepeats' | 'expensiveRepeats' | 'streamRepeats'> {
  const scale = (count: number): number => Math.max(1, Math.round(count * policy.repeatScale));
  return {
    // V8 needs a few hundred steps of a small problem before its optimized code runs; a quarter of a second covers it.
    iterationWarmup: 5,
    iterationWarmupSeconds: 0.25,
    // Threaded iterations vary with scheduling: enough repeats that the best is representative.
    iterationRepeats: scale(n <= 500 ? 50 : 30),
    expensiveRepeats: scale(n <= 500 ? 3 : 1),
    streamRepeats: scale(10),
  };
}

/** Writes the matrix, assignment and problem.json of `problem` under cacheDir; returns the problem file. */
export function writeProblemCache(
  problem: ProblemDefinition,
  cacheDir: string,
  policy: RepetitionPolicy,
): { path: string; spec: ProblemFile } {
  mkdirSync(cacheDir, { recursive: true });
  const A = buildMatrixOf(problem.source);
  const n = A.rows;
  const assignment = buildPartition({ machines: problem.m }, n).assignment;
  const matrixFile = join(cacheDir, `${problem.name}.f64`);
  const assignmentFile = join(cacheDir, `${problem.name}.i32`);
  writeFileSync(matrixFile, new Uint8Array(A.data.buffer, A.data.byteOffset, A.data.byteLength));
  writeFileSync(assignmentFile, new Uint8Array(assignment.buffer, assignment.byteOffset, assignment.byteLength));
  const spec: ProblemFile = {
    name: problem.name,
    matrixFile,
    assignmentFile,
    n,
    m: problem.m,
    tolerance: policy.tolerance,
    maxSolveIterations: policy.maxSolveIterations,
    solveBudgetSeconds: policy.solveBudgetSeconds,
    ...repetitionsFor(n, policy),
  };
  const path = join(cacheDir, `${problem.name}.json`);
  writeFileSync(path, `${JSON.stringify(spec, null, 2)}\n`);
  return { path, spec };
}
