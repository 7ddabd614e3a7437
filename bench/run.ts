/**
 * `npm run bench`: the performance benchmark, side by side with NumPy, in one run.
 *
 * For every problem (bench/problems.ts: Gaussian mean-1 matrices n = 250..2000, m = 10 and 50;
 * olm1000, 1138_bus, sherman5 with m = 10) the matrix and partition are written once to
 * bench/.cache, then timed in separate child processes (so peak RSS is per problem and per side):
 * bench/stages.ts once per available backend (TypeScript always, native when the addon is built)
 * and bench/reference.py. Then each backend's agreement with the NumPy fixtures (bench/fixtures.ts),
 * and the service end to end (bench/endToEnd.ts). The targets (bench/targets.ts) are evaluated on the
 * results; bench/report.ts prints the tables on stdout and writes bench/results.md (the raw numbers
 * go to bench/.cache/results.json).
 *
 *   node --import tsx bench/run.ts [--quick] [--problems a,b | none] [--backends typescript,native]
 *     [--solve-budget 5] [--max-solve-iterations 100000] [--repeat-scale 1]
 *     [--no-e2e] [--e2e-jobs 2000] [--e2e-seconds 30] [--e2e-concurrency 8,16,32,64] [--no-fixtures] [--no-time-to-solution]
 *     [--no-multiple-rhs]
 *     [--wait-quiet 30] [--retry-noisy 1] [--out file] [--render results.json]
 * --wait-quiet: before each problem and the load test, wait (at most that long) for other processes
 * to leave the cores idle; --retry-noisy: repeat a problem during which they used > 0.25 core.
 * --render: only re-render the report from the raw results of an earlier run (bench/.cache/results.json).
 * --studies [--studies-samples 300] [--studies-rounds 2]: Experiment 1 through HTTP with 1 and 2 worker
 * processes next to NumPy (bench/studies.ts); --split-analysis [--split-n 4000] [--split-m 400]
 * [--split-workers 2]: the split analysis against one worker (bench/splitAnalysis.ts); --fairness
 * [--fairness-flood 60] [--fairness-small 200] [--fairness-keys 4]: small jobs' start latency (p50,
 * p99) while another key's flood of long solves holds the regular worker slots (bench/fairness.ts).
 * They take minutes and are off by default.
 * --quick: two small problems, fewer repetitions, 1 s solves, a short load test, output to
 * bench/.cache/results-quick.md (bench/results.md stays the full run's).
 *
 * The matrices and fixtures are the shared reference data: SHARED_DIR when set, else the shared
 * reference directory next to the repository, else the copy test/reference vendors.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fixtureSummary } from './agreement.js';
import { backendSupport, type BackendName } from './backends.js';
import type { SideReport } from './common.js';
import { runEndToEnd, type E2eResult, type EndToEndOptions } from './endToEnd.js';
import type { FixtureReport } from './fixtures.js';
import { cpuSnapshot, foreignCores, NOISY_CORES, probeMachine, waitForQuiet } from './machineProbe.js';
import { defaultProblems, problemByName, type ProblemDefinition, type RepetitionPolicy, writeProblemCache } from './problems.js';
import {
  BENCH,
  CACHE,
  CHILD_ENV,
  CHILD_TIMEOUT_MS,
  lastJson,
  log,
  NODE_STAGES,
  NODE_TSX,
  ROOT,
  runChild,
  SPARSE_CHILD_TIMEOUT_MS,
} from './processes.js';
import type { ProblemResult, QuietPolicy, RunRecord, SideOutcome } from './record.js';
import { problemLines, renderMarkdown, sparseProblemLines, targetLines } from './report.js';
import { evaluateTargets, type TargetRow } from './targets.js';
import { runFairnessStage, runSplitAnalysisStage, runStudiesStage } from './workerStages.js';
import type { HttpSolveReport } from './httpSolve.js';
import type { CheckpointCostReport } from './checkpointCost.js';
import type { TimeToSolutionReport } from './timeToSolution.js';
import type { MultipleRhsReport } from './multipleRhs.js';
import type { JobPathReport } from './jobPath.js';
import type { SparseSideReport } from './common.js';
import { defaultSparseProblems, sparseProblemByName, type SparseProblemDefinition, writeSparseProblemCache } from './sparseProblems.js';
import type { SparseProblemResult } from './record.js';

function sharedDir(): string {
  const candidates = [process.env.SHARED_DIR, resolve(ROOT, '..', 'shared'), join(ROOT, 'test', 'reference')];
  for (const dir of candidates)
    if (dir && existsSync(join(dir, 'matrices')) && existsSync(join(dir, 'fixtures', 'heterogeneity'))) return dir;
  throw new Error(`no shared reference data (matrices, fixtures) found in ${candidates.filter(Boolean).join(', ')}`);
}

// ---------------------------------------------------------------------------------------------
// Options

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    problems: { type: 'string' },
    backends: { type: 'string' },
    'solve-budget': { type: 'string' },
    'max-solve-iterations': { type: 'string' },
    'repeat-scale': { type: 'string' },
    'no-e2e': { type: 'boolean', default: false },
    'e2e-jobs': { type: 'string' },
    'e2e-seconds': { type: 'string' },
    'e2e-concurrency': { type: 'string' },
    'no-fixtures': { type: 'boolean', default: false },
    'wait-quiet': { type: 'string' },
    'retry-noisy': { type: 'string' },
    out: { type: 'string' },
    render: { type: 'string' },
    'sparse-problems': { type: 'string' },
    'sparse-analysis-max-n': { type: 'string' },
    'no-job-path': { type: 'boolean', default: false },
    'job-path-iterations': { type: 'string' },
    'no-checkpoint-cost': { type: 'boolean', default: false },
    'no-time-to-solution': { type: 'boolean', default: false },
    'no-multiple-rhs': { type: 'boolean', default: false },
    'http-solve-n': { type: 'string' },
    'http-solve-m': { type: 'string' },
    'http-solve-max-iterations': { type: 'string' },
    'no-http-solve': { type: 'boolean', default: false },
    studies: { type: 'boolean', default: false },
    'studies-samples': { type: 'string' },
    'studies-rounds': { type: 'string' },
    'split-analysis': { type: 'boolean', default: false },
    'split-n': { type: 'string' },
    'split-m': { type: 'string' },
    'split-workers': { type: 'string' },
    fairness: { type: 'boolean', default: false },
    'fairness-flood': { type: 'string' },
    'fairness-small': { type: 'string' },
    'fairness-keys': { type: 'string' },
  },
});

const quick = args.quick ?? false;
const SHARED = sharedDir();
const MATRICES = join(SHARED, 'matrices');
const policy: RepetitionPolicy = {
  tolerance: 1e-8,
  maxSolveIterations: Number(args['max-solve-iterations'] ?? 100_000),
  solveBudgetSeconds: Number(args['solve-budget'] ?? (quick ? 1 : 5)),
  repeatScale: Number(args['repeat-scale'] ?? (quick ? 0.3 : 1)),
};
const problems: ProblemDefinition[] =
  args.problems !== undefined
    ? args.problems
        .split(',')
        .filter((name) => name.trim() !== '' && name.trim() !== 'none')
        .map((name) => problemByName(name.trim(), MATRICES))
    : quick
      ? [problemByName('gaussian-n250-m10', MATRICES), problemByName('gaussian-n1000-m10', MATRICES)]
      : defaultProblems(MATRICES);
const e2e: EndToEndOptions | null = args['no-e2e']
  ? null
  : {
      jobs: Number(args['e2e-jobs'] ?? (quick ? 300 : 2000)),
      seconds: Number(args['e2e-seconds'] ?? (quick ? 10 : 30)),
      concurrency: (args['e2e-concurrency'] ?? (quick ? '16' : '8,16,32,64')).split(',').map(Number),
      n: 50,
      m: 5,
    };
const quiet: QuietPolicy = {
  waitSeconds: Number(args['wait-quiet'] ?? (quick ? 0 : 30)),
  retries: Number(args['retry-noisy'] ?? (quick ? 0 : 1)),
};
const sparseProblems: SparseProblemDefinition[] =
  args['sparse-problems'] !== undefined
    ? args['sparse-problems']
        .split(',')
        .filter((name) => name.trim() !== '' && name.trim() !== 'none')
        .map((name) => sparseProblemByName(name.trim(), MATRICES))
    : defaultSparseProblems(MATRICES, quick);
const sparseAnalysisMaxN = Number(args['sparse-analysis-max-n'] ?? (quick ? 10_000 : 250_000));
/** Iterations per run of the job path (dense / CSR). */
const jobPathIterations = Number(args['job-path-iterations'] ?? (quick ? 300 : 2000));
const httpSolve = args['no-http-solve']
  ? null
  : {
      n: Number(args['http-solve-n'] ?? (quick ? 10_000 : 1_000_000)),
      m: Number(args['http-solve-m'] ?? (quick ? 10 : 100)),
      maxIterations: Number(args['http-solve-max-iterations'] ?? 100_000),
    };
/** The worker fleet's stages (bench/workerStages.ts): minutes each, so only when asked for. */
const studiesStage = args.studies
  ? { samples: Number(args['studies-samples'] ?? (quick ? 50 : 300)), rounds: Number(args['studies-rounds'] ?? (quick ? 1 : 2)) }
  : null;
const splitStage = args['split-analysis']
  ? {
      n: Number(args['split-n'] ?? (quick ? 1000 : 4000)),
      m: Number(args['split-m'] ?? (quick ? 100 : 400)),
      workers: Number(args['split-workers'] ?? 2),
    }
  : null;
const fairnessStage = args.fairness
  ? {
      flood: Number(args['fairness-flood'] ?? 60),
      small: Number(args['fairness-small'] ?? (quick ? 50 : 200)),
      keys: Number(args['fairness-keys'] ?? 4),
    }
  : null;
const outFile = resolve(args.out ?? (quick ? join(CACHE, 'results-quick.md') : join(BENCH, 'results.md')));

// ---------------------------------------------------------------------------------------------
// Per problem

/**
 * Runs a problem; a run during which other processes used more than NOISY_CORES is repeated (up
 * to `quiet.retries` times) and the quietest kept.
 */
async function runProblemQuietly(problem: ProblemDefinition, backends: BackendName[]): Promise<ProblemResult> {
  let best: ProblemResult | null = null;
  for (let attempt = 1; attempt <= 1 + quiet.retries; attempt++) {
    await waitForQuiet(quiet.waitSeconds);
    const result = await runProblem(problem, backends);
    if (best === null || (result.otherLoadCores ?? 0) < (best.otherLoadCores ?? 0)) best = result;
    best.attempts = attempt;
    if ((result.otherLoadCores ?? 0) <= NOISY_CORES) break;
    if (attempt <= quiet.retries)
      log(`  ${problem.name}: other processes used ${result.otherLoadCores?.toFixed(2)} cores during the run; repeating it`);
  }
  return best!;
}

/** Writes the problem to the cache, then times it on every backend (bench/stages.ts) and on NumPy (bench/reference.py). */
async function runProblem(problem: ProblemDefinition, backends: BackendName[]): Promise<ProblemResult> {
  const { path, spec } = writeProblemCache(problem, CACHE, policy);
  const before = cpuSnapshot();
  const sides: Record<string, SideOutcome> = {};
  for (const backend of backends) {
    const result = await runChild(process.execPath, [...NODE_STAGES, join(BENCH, 'stages.ts'), path, backend], {
      timeoutMs: CHILD_TIMEOUT_MS,
    });
    sides[backend] = lastJson<SideReport>(result, `stages.ts ${backend}`);
  }
  const reference = await runChild('python3', [join(BENCH, 'reference.py'), path], { timeoutMs: CHILD_TIMEOUT_MS });
  sides.numpy = lastJson<SideReport>(reference, 'reference.py');
  return { spec, sides, otherLoadCores: foreignCores(before, cpuSnapshot()), attempts: 1 };
}

/** A sparse problem: its cache, then bench/sparseStages.ts per backend and reference.py's sparse branch (SciPy). */
async function runSparseProblem(problem: SparseProblemDefinition, backends: BackendName[]): Promise<SparseProblemResult> {
  const { path, spec } = await writeSparseProblemCache(problem, CACHE, policy, sparseAnalysisMaxN);
  const before = cpuSnapshot();
  const sides: SparseProblemResult['sides'] = {};
  for (const backend of backends) {
    const result = await runChild(process.execPath, [...NODE_STAGES, join(BENCH, 'sparseStages.ts'), path, backend], {
      timeoutMs: SPARSE_CHILD_TIMEOUT_MS,
    });
    sides[backend] = lastJson<SparseSideReport>(result, `sparseStages.ts ${backend}`);
  }
  const reference = await runChild('python3', [join(BENCH, 'reference.py'), path], { timeoutMs: SPARSE_CHILD_TIMEOUT_MS });
  sides.numpy = lastJson<SparseSideReport>(reference, 'reference.py (sparse)');
  return { spec, sides, otherLoadCores: foreignCores(before, cpuSnapshot()) };
}

/**
 * A bench script (`script`, in bench/) in a process of its own: its indented lines echoed to the log, its last JSON
 * line returned as its report (or why there is none, named by `label`).
 */
async function benchChild<T>(script: string, args: string[], timeoutMs: number, label: string): Promise<T | { error: string }> {
  const result = await runChild(process.execPath, [...NODE_TSX, join(BENCH, script), ...args], { timeoutMs });
  for (const line of result.stdout.split('\n').filter((l) => l.startsWith('  '))) log(line);
  return lastJson<T>(result, label);
}

/** The job path against the library (bench/jobPath.ts), one process per backend. */
async function runJobPath(backends: BackendName[]): Promise<Record<string, JobPathReport | { error: string }>> {
  const out: Record<string, JobPathReport | { error: string }> = {};
  const sizes = quick ? ['--dense-n', '500', '--csr-k', '100', '--csr-m', '10'] : [];
  for (const backend of backends) {
    log(`\njob path (${backend}): the same runs through the library and through a job`);
    const iterations = String(jobPathIterations);
    out[backend] = await benchChild<JobPathReport>(
      'jobPath.ts',
      [backend, ...sizes, '--dense-iterations', iterations, '--csr-iterations', iterations],
      SPARSE_CHILD_TIMEOUT_MS,
      `jobPath.ts ${backend}`,
    );
  }
  return out;
}

/**
 * What checkpoints cost a run (bench/checkpointCost.ts), one process per backend: 65 s runs at the
 * default interval (quick: 6 s runs every 2 s, a smoke test of the path).
 */
async function runCheckpointCost(backends: BackendName[]): Promise<Record<string, CheckpointCostReport | { error: string }>> {
  const out: Record<string, CheckpointCostReport | { error: string }> = {};
  const options = quick ? ['--n', '500', '--seconds', '6', '--interval-ms', '2000'] : [];
  for (const backend of backends) {
    log(`\ncheckpoints (${backend}): the same runs with checkpoints and without`);
    out[backend] = await benchChild<CheckpointCostReport>(
      'checkpointCost.ts',
      [backend, ...options],
      CHILD_TIMEOUT_MS,
      `checkpointCost.ts ${backend}`,
    );
  }
  return out;
}

/**
 * The time-to-solution model against measured runs (bench/timeToSolution.ts), one process per backend and
 * measurement: seconds per iteration of all six algorithms on dense n = 1000, m = 10 and CSR Poisson
 * n = 40,000, m = 20; then APC and D-HBM to 1e-8 on dense n = 200, m = 4 and CSR Poisson n = 1600, m = 8
 * (the larger problems take 10^5-10^6 iterations). Quick: smaller problems, one round.
 */
async function runTimeToSolution(backends: BackendName[]): Promise<NonNullable<RunRecord['timeToSolution']>> {
  const out: NonNullable<RunRecord['timeToSolution']> = {};
  const perIteration = quick
    ? ['--dense-n', '400', '--csr-k', '100', '--iterations', '300', '--rounds', '1', '--converge', '0']
    : ['--rounds', '3', '--converge', '0'];
  const converged = ['--dense-n', '200', '--dense-m', '4', '--csr-k', '40', '--csr-m', '8', '--iterations', '200', '--rounds', '1'];
  const child = (backend: BackendName, options: string[]): Promise<TimeToSolutionReport | { error: string }> =>
    benchChild<TimeToSolutionReport>(
      'timeToSolution.ts',
      [backend, ...options, '--json'],
      CHILD_TIMEOUT_MS,
      `timeToSolution.ts ${backend}`,
    );
  for (const backend of backends) {
    await waitForQuiet(quiet.waitSeconds);
    log(`\ntime to solution (${backend}): predicted against measured seconds per iteration, then runs to 1e-8`);
    out[backend] = {
      perIteration: await child(backend, perIteration),
      converged: await child(backend, [...converged, '--converge', '40000']),
    };
  }
  return out;
}

/**
 * Several right-hand sides (bench/multipleRhs.ts), one process per backend: a block run's iteration over k = 16
 * right-hand sides against a separate run's, all six algorithms, on dense Gaussian n = 2000, m = 8 and CSR Poisson
 * n = 90,000, m = 20, each the best of 3 rounds. Quick: smaller problems, 2 rounds.
 */
async function runMultipleRhs(backends: BackendName[]): Promise<NonNullable<RunRecord['multipleRhs']>> {
  const out: NonNullable<RunRecord['multipleRhs']> = {};
  const options = quick ? ['--dense-n', '500', '--csr-k', '100', '--iterations', '20', '--rounds', '2'] : ['--rounds', '3'];
  for (const backend of backends) {
    await waitForQuiet(quiet.waitSeconds);
    log(`\nseveral right-hand sides (${backend}): an iteration over k of them against a separate run's, per right-hand side`);
    out[backend] = await benchChild<MultipleRhsReport>(
      'multipleRhs.ts',
      [backend, ...options, '--json'],
      CHILD_TIMEOUT_MS,
      `multipleRhs.ts ${backend}`,
    );
  }
  return out;
}

/** The full APC solve through HTTP (bench/httpSolve.ts). */
async function runHttpSolve(options: { n: number; m: number; maxIterations: number }): Promise<HttpSolveReport | { error: string }> {
  log(`\nAPC solve through HTTP: Poisson n = ${options.n}, m = ${options.m} (upload, job, trace, solution)`);
  return benchChild<HttpSolveReport>(
    'httpSolve.ts',
    ['--n', String(options.n), '--m', String(options.m), '--max-iterations', String(options.maxIterations)],
    SPARSE_CHILD_TIMEOUT_MS,
    'httpSolve.ts',
  );
}

/** Each backend against the NumPy/SciPy fixtures (bench/fixtures.ts), in a process of its own. */
async function runFixtures(backends: BackendName[]): Promise<Record<string, FixtureReport | { error: string }>> {
  const fixtures: Record<string, FixtureReport | { error: string }> = {};
  for (const backend of backends) {
    const result = await runChild(
      process.execPath,
      [...NODE_TSX, join(BENCH, 'fixtures.ts'), backend, join(SHARED, 'fixtures', 'heterogeneity'), MATRICES],
      { timeoutMs: CHILD_TIMEOUT_MS },
    );
    fixtures[backend] = lastJson<FixtureReport>(result, `fixtures.ts ${backend}`);
    log(`\nfixtures (${backend}): ${fixtureSummary(fixtures[backend])}`);
  }
  return fixtures;
}

// ---------------------------------------------------------------------------------------------

function writeReport(record: RunRecord): TargetRow[] {
  const rows = evaluateTargets(record);
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, renderMarkdown(record, rows));
  return rows;
}

/** The command as the user typed it, for the report. */
function commandLine(): string {
  const npmEvent = process.env.npm_lifecycle_event;
  const argv = process.argv.slice(2).join(' ');
  return npmEvent
    ? `npm run ${npmEvent}${argv && !(process.env.npm_lifecycle_script ?? '').endsWith(argv) ? ` -- ${argv}` : ''}`
    : `node --import tsx bench/run.ts${argv ? ` ${argv}` : ''}`;
}

async function main(): Promise<void> {
  if (args.render) {
    // Re-render a report from the raw results of an earlier run (same numbers, same command).
    writeReport(JSON.parse(readFileSync(args.render, 'utf8')) as RunRecord);
    log(`written: ${relative(ROOT, outFile)} from ${args.render}`);
    return;
  }
  const started = performance.now();
  const support = backendSupport();
  const requested = args.backends ? (args.backends.split(',').map((b) => b.trim()) as BackendName[]) : support.available;
  const backends = requested.filter((b) => support.available.includes(b));
  for (const b of requested) if (!backends.includes(b)) support.notes.push(`Backend ${b} was requested but is not available.`);

  const machine = await probeMachine();
  const command = commandLine();
  log(
    `benchmark: ${problems.length} problems, backends ${backends.join(', ')}, ` +
      `solve budget ${policy.solveBudgetSeconds} s, cap ${policy.maxSolveIterations} iterations`,
  );
  for (const note of support.notes) log(`  note: ${note}`);
  log(
    `  load average ${machine.loadBefore.map((x) => x.toFixed(2)).join(' ')}; cache ${relative(ROOT, CACHE)}; ` +
      `waits up to ${quiet.waitSeconds} s for quiet before each part, repeats a disturbed problem ${quiet.retries} time(s)`,
  );

  const results: ProblemResult[] = [];
  for (const problem of problems) {
    const result = await runProblemQuietly(problem, backends);
    results.push(result);
    for (const line of problemLines(result, backends)) log(line);
  }

  const sparse: SparseProblemResult[] = [];
  for (const problem of sparseProblems) {
    await waitForQuiet(quiet.waitSeconds);
    const result = await runSparseProblem(problem, backends);
    sparse.push(result);
    for (const line of sparseProblemLines(result, backends)) log(line);
  }

  const fixtures = args['no-fixtures'] ? {} : await runFixtures(backends);
  const jobPath = args['no-job-path'] ? {} : await runJobPath(backends);
  const checkpointCost = args['no-checkpoint-cost'] ? {} : await runCheckpointCost(backends);
  const timeToSolution = args['no-time-to-solution'] ? {} : await runTimeToSolution(backends);
  const multipleRhs = args['no-multiple-rhs'] ? {} : await runMultipleRhs(backends);
  const httpSolveResult = httpSolve ? await runHttpSolve(httpSolve) : null;
  const studiesResult = studiesStage ? await runStudiesStage(studiesStage) : null;
  const splitResult = splitStage ? await runSplitAnalysisStage(splitStage) : null;
  const fairnessResult = fairnessStage ? await runFairnessStage(fairnessStage) : null;

  let e2eResult: E2eResult | null = null;
  if (e2e) {
    await waitForQuiet(quiet.waitSeconds);
    e2eResult = await runEndToEnd(e2e);
    if (e2eResult.error) log(`  end to end failed: ${e2eResult.error}`);
  }

  machine.loadAfter = os.loadavg();
  const record: RunRecord = {
    date: new Date().toISOString(),
    command,
    machine,
    policy,
    backends,
    backendNotes: support.notes,
    problems: results,
    fixtures,
    e2e: e2eResult,
    quiet,
    glibcTunables: CHILD_ENV.GLIBC_TUNABLES ?? '',
    totalSeconds: (performance.now() - started) / 1e3,
    sparse,
    jobPath,
    checkpointCost,
    timeToSolution,
    multipleRhs,
    httpSolve: httpSolveResult,
    studies: studiesResult,
    splitAnalysis: splitResult,
    fairness: fairnessResult,
  };
  writeFileSync(join(CACHE, quick ? 'results-quick.json' : 'results.json'), `${JSON.stringify(record, null, 2)}\n`);
  const rows = writeReport(record);
  for (const line of targetLines(rows)) log(line);
  log(`\nwritten: ${relative(ROOT, outFile)} (${(record.totalSeconds / 60).toFixed(1)} min)`);
}

await main();
