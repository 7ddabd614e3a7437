/**
 * The benchmark's problems and the cache both sides read them from: each problem's matrix is
 * written once per run as raw float64 (row-major) with its row -> machine assignment as raw int32
 * and a problem.json, so bench/stages.ts and bench/reference.py time exactly the same bytes.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPartition, generateMatrix, parseMatrixMarket, type DenseMatrix } from '../src/solvers/index.js';
import type { ProblemFile } from './common.js';

export interface ProblemDefinition {
  /** Unique; names the cache files and the report's rows (e.g. gaussian-n2000-m10, sherman5-m10). */
  name: string;
  /** Machines: the rows are split into m contiguous blocks, as the API's { machines: m }. */
  m: number;
  /** Builds the matrix (once per run; both sides then read the cached bytes). */
  matrix: () => DenseMatrix;
}

/**
 * A family of problems: the names it answers to (--problems), its problems in `npm run bench`,
 * and how a problem's matrix is built. Adding a family is one entry of PROBLEM_FAMILIES.
 */
export interface ProblemFamily {
  /** The name pattern, for messages. */
  pattern: string;
  /** The problem `name` denotes in this family, or null when the name is not of this family. */
  fromName: (name: string, matricesDir: string) => ProblemDefinition | null;
  /** This family's problems in `npm run bench`, small to large. */
  defaults: (matricesDir: string) => ProblemDefinition[];
}

export const GAUSSIAN_SIZES = [250, 500, 1000, 2000];
export const GAUSSIAN_MACHINES = [10, 50];
export const REAL_MATRICES = ['olm1000.mtx', '1138_bus.mtx', 'sherman5.mtx'];
/** Machines for the real matrices (contiguous blocks, as the API's { machines }). */
export const REAL_MACHINES = 10;

export function gaussianProblemName(n: number, m: number): string {
  return `gaussian-n${n}-m${m}`;
}

/** The paper's Gaussian experiment: entries N(1, 1), a seed of its own per (n, m). */
export function gaussianProblem(n: number, m: number): ProblemDefinition {
  const seed = 2024 + n + m;
  return {
    name: gaussianProblemName(n, m),
    m,
    matrix: () => generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed }),
  };
}

/** A Matrix Market file of the reference matrices (matricesDir). */
export function realProblem(file: string, matricesDir: string, m = REAL_MACHINES): ProblemDefinition {
  return {
    name: `${file.replace(/\.mtx$/, '')}-m${m}`,
    m,
    matrix: () => parseMatrixMarket(readFileSync(join(matricesDir, file), 'utf8')),
  };
}

/** In the order `npm run bench` runs them and names are tried: the Matrix Market family takes any name, so it comes last. */
export const PROBLEM_FAMILIES: readonly ProblemFamily[] = [
  {
    pattern: 'gaussian-n<N>-m<M>',
    fromName: (name) => {
      const match = /^gaussian-n(\d+)-m(\d+)$/.exec(name);
      return match ? gaussianProblem(Number(match[1]), Number(match[2])) : null;
    },
    defaults: () => GAUSSIAN_SIZES.flatMap((n) => GAUSSIAN_MACHINES.map((m) => gaussianProblem(n, m))),
  },
  {
    pattern: '<matrix>-m<M> or <matrix>.mtx (a file of the reference matrices)',
    fromName: (name, matricesDir) => {
      const match = /^(.+?)(?:\.mtx)?(?:-m(\d+))?$/.exec(name);
      return match ? realProblem(`${match[1]}.mtx`, matricesDir, match[2] ? Number(match[2]) : REAL_MACHINES) : null;
    },
    defaults: (matricesDir) => REAL_MATRICES.map((file) => realProblem(file, matricesDir)),
  },
];

/** Every problem of `npm run bench`, family by family. */
export function defaultProblems(matricesDir: string): ProblemDefinition[] {
  return PROBLEM_FAMILIES.flatMap((family) => family.defaults(matricesDir));
}

/** A problem by name, from the first family that knows it. */
export function problemByName(name: string, matricesDir: string): ProblemDefinition {
  for (const family of PROBLEM_FAMILIES) {
    const problem = family.fromName(name, matricesDir);
    if (problem) return problem;
  }
  throw new Error(`unknown problem ${name}: expected ${PROBLEM_FAMILIES.map((f) => f.pattern).join(', ')}`);
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
  const A = problem.matrix();
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
