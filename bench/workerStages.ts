/**
 * The worker fleet's stages of `npm run bench` (issue 12 §3, issue 23 §2), each a script of its own
 * run as a child process: bench/studies.ts (Experiment 1 through HTTP with 1 and 2 worker processes,
 * next to bench/studiesReference.py), bench/splitAnalysis.ts (one dense analysis split over worker
 * processes against one worker) and bench/fairness.ts (small jobs' start latency under another key's
 * flood). They take minutes, so the default run skips them: `npm run bench -- --studies
 * --split-analysis --fairness` adds them (bench/run.ts).
 */
import { join } from 'node:path';
import type { FairnessReport } from './fairness.js';
import { BENCH, CHILD_TIMEOUT_MS, lastJson, log, NODE_TSX, runChild, SPARSE_CHILD_TIMEOUT_MS } from './processes.js';

/** bench/studies.ts's last line (best of its rounds). */
export interface StudiesReport {
  samples: number;
  analyses: number;
  rounds: number;
  loadAverage: number[];
  numpySeconds: number | null;
  httpOneWorkerSeconds: number | null;
  httpTwoWorkersSeconds: number | null;
  ratioToNumpy: number | null;
  scaling: number | null;
  scalingMedian: number | null;
}

/** bench/splitAnalysis.ts's last line. */
export interface SplitAnalysisReport {
  n: number;
  m: number;
  oneWorkerSeconds: number;
  splitSeconds: number;
  workers: number;
  speedup: number;
}

export interface StudiesOptions {
  samples: number;
  rounds: number;
}

export interface SplitAnalysisOptions {
  n: number;
  m: number;
  workers: number;
}

/** Prints the child's indented progress lines as they were, then returns its report. */
function echo(stdout: string): void {
  for (const line of stdout.split('\n').filter((l) => l.startsWith('  ') || l.startsWith('Experiment'))) log(line);
}

export async function runStudiesStage(options: StudiesOptions): Promise<StudiesReport | { error: string }> {
  log(
    `\nExperiment 1 through HTTP (${options.samples} samples per point), 1 and 2 worker processes, next to NumPy: ${options.rounds} round(s)`,
  );
  const result = await runChild(
    process.execPath,
    [...NODE_TSX, join(BENCH, 'studies.ts'), String(options.samples), '--rounds', String(options.rounds)],
    { timeoutMs: SPARSE_CHILD_TIMEOUT_MS },
  );
  echo(result.stdout);
  return lastJson<StudiesReport>(result, 'studies.ts');
}

export async function runSplitAnalysisStage(options: SplitAnalysisOptions): Promise<SplitAnalysisReport | { error: string }> {
  log(`\nsplit analysis: n = ${options.n}, m = ${options.m} over ${options.workers} worker processes against one`);
  const result = await runChild(
    process.execPath,
    [
      ...NODE_TSX,
      join(BENCH, 'splitAnalysis.ts'),
      '--n',
      String(options.n),
      '--m',
      String(options.m),
      '--workers',
      String(options.workers),
    ],
    { timeoutMs: SPARSE_CHILD_TIMEOUT_MS },
  );
  const report = lastJson<SplitAnalysisReport>(result, 'splitAnalysis.ts');
  if (!('error' in report))
    log(`  one worker ${report.oneWorkerSeconds} s, split over ${report.workers}: ${report.splitSeconds} s (${report.speedup}x)`);
  return report;
}

export interface FairnessOptions {
  flood: number;
  small: number;
  keys: number;
}

export async function runFairnessStage(options: FairnessOptions): Promise<FairnessReport | { error: string }> {
  log(
    `\nsmall jobs' start latency under a flood: ${options.flood} long solves of one key, ${options.small} small jobs of ${options.keys} others`,
  );
  const result = await runChild(
    process.execPath,
    [
      ...NODE_TSX,
      join(BENCH, 'fairness.ts'),
      '--flood',
      String(options.flood),
      '--small',
      String(options.small),
      '--keys',
      String(options.keys),
    ],
    { timeoutMs: CHILD_TIMEOUT_MS },
  );
  echo(result.stdout);
  return lastJson<FairnessReport>(result, 'fairness.ts');
}
