/**
 * The worker fleet's stages of `npm run bench` (issue 12 §3), each a script of its own run as a child
 * process: bench/studies.ts (Experiment 1 through HTTP with 1 and 2 worker processes, next to
 * bench/studiesReference.py) and bench/splitAnalysis.ts (one dense analysis split over worker
 * processes against one worker). They take minutes, so the default run skips them:
 * `npm run bench -- --studies --split-analysis` adds them (bench/run.ts).
 */
import { join } from 'node:path';
import { BENCH, lastJson, log, NODE_TSX, runChild, SPARSE_CHILD_TIMEOUT_MS } from './processes.js';

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
