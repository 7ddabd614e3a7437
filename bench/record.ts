/**
 * The raw results of one benchmark run (bench/.cache/results.json; `--render` re-renders the
 * report from it), and the quantities the report and the targets derive from them.
 */
import type { BackendName } from './backends.js';
import type { ProblemFile, SideReport, SolveReport, SparseSideReport } from './common.js';
import type { E2eResult } from './endToEnd.js';
import type { FairnessReport } from './fairness.js';
import type { FixtureReport } from './fixtures.js';
import type { HttpSolveReport } from './httpSolve.js';
import type { SplitAnalysisReport, StudiesReport } from './workerStages.js';
import type { CheckpointCostReport } from './checkpointCost.js';
import type { TimeToSolutionReport } from './timeToSolution.js';
import type { MultipleRhsReport } from './multipleRhs.js';
import type { JobPathReport } from './jobPath.js';
import type { SparseProblemFile } from './sparseProblems.js';
import type { Machine } from './machineProbe.js';
import type { RepetitionPolicy } from './problems.js';

/** A side's report, or why it has none (its process failed, timed out or could not start). */
export type SideOutcome = SideReport | { error: string };

export interface ProblemResult {
  spec: ProblemFile;
  /** By side: 'typescript', 'native', 'numpy'. */
  sides: Record<string, SideOutcome>;
  /** Cores other processes kept busy while this problem ran (null where /proc is unavailable). */
  otherLoadCores: number | null;
  /** Runs made (more than 1 when a run was disturbed by other load and repeated; the quietest is kept). */
  attempts: number;
}

/** Other load on a shared machine: wait for quiet before each timed part, repeat a disturbed problem. */
export interface QuietPolicy {
  /** Longest wait for idle cores before each problem and the load test (seconds; 0: no wait). */
  waitSeconds: number;
  /** Repeats of a problem during which other processes used more than NOISY_CORES. */
  retries: number;
}

/** A sparse problem's sides: 'typescript', 'native' (bench/sparseStages.ts) and 'numpy' (SciPy, bench/reference.py). */
export interface SparseProblemResult {
  spec: SparseProblemFile;
  sides: Record<string, SparseSideReport | { error: string }>;
  otherLoadCores: number | null;
}

export interface RunRecord {
  date: string;
  command: string;
  machine: Machine;
  policy: RepetitionPolicy;
  backends: BackendName[];
  backendNotes: string[];
  problems: ProblemResult[];
  fixtures: Record<string, FixtureReport | { error: string }>;
  e2e: E2eResult | null;
  quiet: QuietPolicy;
  /**
   * GLIBC_TUNABLES of every process the run timed, ours and NumPy's (bench/processes.ts CHILD_ENV), as it measured
   * them; absent in records before the job processes asked for huge pages (2026-12-05).
   */
  glibcTunables?: string;
  totalSeconds: number;
  /** Absent in the raw results of runs before the sparse problems existed. */
  sparse?: SparseProblemResult[];
  /** The job path against the library, per backend (bench/jobPath.ts). */
  jobPath?: Record<string, JobPathReport | { error: string }>;
  /** What checkpoints cost a run, per backend (bench/checkpointCost.ts); absent before checkpoints existed. */
  checkpointCost?: Record<string, CheckpointCostReport | { error: string }>;
  /**
   * The time-to-solution model against measured runs, per backend (bench/timeToSolution.ts): `perIteration` on the
   * bench's dense and CSR problems, `converged` runs to 1e-8 on smaller ones; absent before it was part of the run.
   */
  timeToSolution?: Record<
    string,
    { perIteration: TimeToSolutionReport | { error: string }; converged: TimeToSolutionReport | { error: string } }
  >;
  /**
   * Several right-hand sides (issue 24 §2, bench/multipleRhs.ts): per backend, the cost per right-hand side of a block
   * run's iteration over k of them against a separate run's, dense and CSR; absent before it was part of the run.
   */
  multipleRhs?: Record<string, MultipleRhsReport | { error: string }>;
  /** The full APC solve through HTTP (bench/httpSolve.ts); null when not run. */
  httpSolve?: HttpSolveReport | { error: string } | null;
  /** Experiment 1 through HTTP, 1 and 2 workers, and NumPy (bench/studies.ts, run.ts --studies); absent when not run. */
  studies?: StudiesReport | { error: string } | null;
  /** The split analysis against one worker (bench/splitAnalysis.ts, run.ts --split-analysis); absent when not run. */
  splitAnalysis?: SplitAnalysisReport | { error: string } | null;
  /** Small jobs' start latency under another key's flood (bench/fairness.ts, run.ts --fairness); absent when not run. */
  fairness?: FairnessReport | { error: string } | null;
}

export const isReport = (s: SideOutcome | undefined): s is SideReport => s !== undefined && !('error' in s);

export function findProblem(record: RunRecord, name: string): ProblemResult | undefined {
  return record.problems.find((p) => p.spec.name === name);
}

/** Per iteration for the solves, so that runs cut by the budget still compare. */
export function secondsPerIteration(s: SolveReport): number {
  return s.iterations > 0 ? s.seconds / s.iterations : NaN;
}

/** The fastest streaming pass over A measured on this machine for this problem (any side, any kernel). */
export function bestStream(sides: Record<string, SideOutcome>): number {
  return Math.min(
    ...Object.values(sides)
      .filter(isReport)
      .map((s) => s.stages.streamMatrix),
  );
}

export const isSparseReport = (s: SparseSideReport | { error: string } | undefined): s is SparseSideReport =>
  s !== undefined && !('error' in s);

export function findSparseProblem(record: RunRecord, name: string): SparseProblemResult | undefined {
  return record.sparse?.find((p) => p.spec.name === name);
}
