/**
 * The raw results of one benchmark run (bench/.cache/results.json; `--render` re-renders the
 * report from it), and the quantities the report and the targets derive from them.
 */
import type { BackendName } from './backends.js';
import type { ProblemFile, SideReport, SolveReport } from './common.js';
import type { E2eResult } from './endToEnd.js';
import type { FixtureReport } from './fixtures.js';
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
  totalSeconds: number;
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
