/**
 * Every target of the benchmark, in one table (TARGETS): what is compared, for which backend, the
 * threshold, how the measured value is taken from a run's results and what limits it when missed.
 * evaluateTargets turns the table into the rows the report's Targets table, its summary and the
 * console show. Adding a target is one row of TARGETS (a ratio to NumPy on a stage of a problem of
 * bench/problems.ts needs nothing else).
 */
import { AGREEMENT_KEYS, agreementPairs, fixtureSummary, worstAgreement, worstToleranceFraction } from './agreement.js';
import type { BackendName } from './backends.js';
import type { AnalysisPhases, SideReport, SparseStageName, StageName } from './common.js';
import { FLOAT64_BYTES, formatBytes, formatExponential, formatSeconds } from './common.js';
import type { MeasuredLoad } from './endToEnd.js';
import { gaussianProblemName } from './problems.js';
import { bestStream, findProblem, findSparseProblem, isReport, isSparseReport, type ProblemResult, type RunRecord } from './record.js';
import type { TimeToSolutionProblem } from './timeToSolution.js';

type IterationStage = 'apcIteration' | 'dhbmIteration';

/** Our time against NumPy's for the same stage of the same problem: ratio = ours / NumPy, met when at most `atMost`. */
export interface RatioTarget {
  kind: 'ratio';
  /** Stable name; the summary finds rows by it. */
  id: string;
  description: string;
  backend: BackendName;
  /** A problem name of bench/problems.ts; a run without it reports the target as not measured. */
  problem: string;
  /**
   * Whose time: the backend's for a stage, or the TypeScript backend's iteration on its plain
   * loops (LINALG_WASM=off). The plain loops are timed only where the WebAssembly kernels ran, so
   * an unmeasured one gets no row rather than a "not measured" one.
   */
  measure: { stage: StageName } | { plainLoops: IterationStage };
  atMost: number;
  /** What limits a missed target, from its measurement. */
  limitedBy: (m: RatioMeasurement) => string;
}

/** Peak memory, for every backend measured. */
export interface MemoryTarget {
  kind: 'memory';
  id: string;
  description: string;
  /** At most this many n x n float64 matrices held by the analysis beyond its inputs (A, A_i, Q_i)... */
  maxHeldNxN: number;
  /** ...on the problems with at least this n, where n x n dominates the runtime's own memory. */
  heldFromN: number;
  /** A problem every backend must complete: its name, how the report calls it, its n. */
  completes: { problem: string; label: string; n: number };
}

/** The service end to end: the best load level's throughput and p99 latency. */
export interface ServiceTarget {
  kind: 'service';
  id: string;
  minJobsPerSecond: number;
  /** p99 latency strictly below this (ms), with no failed job. */
  maxP99Ms: number;
}

/** The analysis values of every agreement pair (each backend vs NumPy, native vs TypeScript). */
export interface AgreementTarget {
  kind: 'agreement';
  id: string;
  description: string;
  threshold: string;
}

/** Each backend measured against the NumPy/SciPy fixtures (bench/fixtures.ts). */
export interface FixturesTarget {
  kind: 'fixtures';
  id: string;
  description: string;
  threshold: string;
}

/** A stage of a sparse problem (bench/sparseProblems.ts) against SciPy's: ratio = ours / SciPy, met when at most `atMost`. */
export interface SparseRatioTarget {
  kind: 'sparseRatio';
  id: string;
  description: string;
  backend: BackendName;
  problem: string;
  stage: SparseStageName;
  /** Infinity: the stage only has to complete. */
  atMost: number;
}

/** Peak RSS of a sparse problem's process, for every backend measured, and of the service during the HTTP solve. */
export interface SparseMemoryTarget {
  kind: 'sparseMemory';
  id: string;
  description: string;
  problem: string;
  maxBytes: number;
}

/** Through a job, an iteration costs what the library's does (bench/jobPath.ts): job / library per iteration. */
export interface JobPathTarget {
  kind: 'jobPath';
  id: string;
  storage: 'dense' | 'csr';
  algorithm: 'dhbm' | 'apc';
  atMost: number;
}

/** A run with checkpoints at the default interval against the same run without (bench/checkpointCost.ts). */
export interface CheckpointCostTarget {
  kind: 'checkpointCost';
  id: string;
  algorithm: 'dhbm' | 'apc';
  atMost: number;
}

/**
 * The time-to-solution model (issue 25 §1, bench/timeToSolution.ts): predicted seconds per iteration within
 * `within` (a fraction) of the measured ones, all six algorithms on one storage; or, for `converged`, the
 * predicted time of runs to 1e-8 within a factor `within` of the measured one.
 */
export interface TimeToSolutionTarget {
  kind: 'timeToSolution';
  id: string;
  storage: 'dense' | 'csr';
  measure: 'perIteration' | 'converged';
  within: number;
}

/**
 * Several right-hand sides (issue 24 §2, bench/multipleRhs.ts): a block run's iteration over k = 16 of them costs at
 * most `atMost` times k separate runs' iterations, for every algorithm, on the storage's problem.
 */
export interface MultipleRhsTarget {
  kind: 'multipleRhs';
  id: string;
  storage: 'dense' | 'csr';
  atMost: number;
}

/** A full APC solve through the HTTP API (bench/httpSolve.ts): upload, job, trace, solution. */
export interface HttpSolveTarget {
  kind: 'httpSolve';
  id: string;
  description: string;
  tolerance: number;
}

/** Experiment 1 through HTTP (bench/studies.ts): its wall time against NumPy's and 60 s, and 1 -> 2 worker processes. */
export interface StudyTarget {
  kind: 'study';
  id: string;
  description: string;
  measure: 'ratioToNumpy' | 'seconds' | 'scaling';
  /** At most this for ratioToNumpy and seconds, at least this for scaling. */
  threshold: number;
}

/** One dense analysis split over worker processes against one worker (bench/splitAnalysis.ts): at least `atLeast` x faster. */
export interface SplitAnalysisTarget {
  kind: 'splitAnalysis';
  id: string;
  description: string;
  atLeast: number;
}

/** Small jobs' start latency while another key's flood holds the regular worker slots (bench/fairness.ts): p99 at most `atMostMs`. */
export interface FairnessTarget {
  kind: 'fairness';
  id: string;
  description: string;
  atMostMs: number;
}

export type Target =
  | StudyTarget
  | SplitAnalysisTarget
  | FairnessTarget
  | RatioTarget
  | MemoryTarget
  | ServiceTarget
  | AgreementTarget
  | FixturesTarget
  | SparseRatioTarget
  | SparseMemoryTarget
  | JobPathTarget
  | CheckpointCostTarget
  | TimeToSolutionTarget
  | MultipleRhsTarget
  | HttpSolveTarget;

/** The sparse problems of issue 11 §5 (bench/sparseProblems.ts), the iteration targets' rows. */
const POISSON_1E6 = 'poisson-n1000000-m100';
const CONVDIFF_250K = 'convdiff-n250000-m100';
const SPARSE_ITERATION_PROBLEMS = [POISSON_1E6, CONVDIFF_250K, 'sherman5-csr-m10', 'fs1831-csr-m10', '1138_bus-csr-m10'];
/** Per backend: one D-HBM iteration, one APC iteration (at most this many times SciPy's). */
const SPARSE_ITERATION_LIMITS: Record<BackendName, { dhbmIteration: number; apcIteration: number }> = {
  native: { dhbmIteration: 1, apcIteration: 1 },
  typescript: { dhbmIteration: 1.5, apcIteration: 2 },
};

function sparseTargets(backend: BackendName): SparseRatioTarget[] {
  const row = (problem: string, stage: SparseStageName, atMost: number, description: string): SparseRatioTarget => ({
    kind: 'sparseRatio',
    id: `sparse.${stage}:${problem}:${backend}`,
    description,
    backend,
    problem,
    stage,
    atMost,
  });
  return [
    ...(['dhbmIteration', 'apcIteration'] as const).flatMap((stage) =>
      SPARSE_ITERATION_PROBLEMS.map((problem) =>
        row(
          problem,
          stage,
          SPARSE_ITERATION_LIMITS[backend][stage],
          `sparse: one ${stage === 'apcIteration' ? 'APC' : 'D-HBM'} iteration, ${problem}`,
        ),
      ),
    ),
    row(POISSON_1E6, 'setup', 1, 'sparse: setup (partition + factorizations of each A_i A_i^T), Poisson n = 10^6, m = 100'),
    row(CONVDIFF_250K, 'analysis', 1, 'sparse: whole analysis, convection-diffusion n = 250,000, m = 100'),
    row(POISSON_1E6, 'analysis', Infinity, 'sparse: whole analysis completes, Poisson n = 10^6, m = 100'),
  ];
}

/** The two n = 2000 Gaussian problems the iteration targets are measured on. */
const ITERATION_N = 2000;
const ALGORITHM_OF: Record<IterationStage, string> = { apcIteration: 'APC', dhbmIteration: 'D-HBM' };

/** The table, in the order of the report's Targets table. */
export const TARGETS: readonly Target[] = [
  iteration('native', 'apcIteration', 10, 1),
  iteration('native', 'apcIteration', 50, 1),
  iteration('native', 'dhbmIteration', 10, 1),
  iteration('native', 'dhbmIteration', 50, 1),
  analysis('native', 1),
  iteration('typescript', 'apcIteration', 10, 2),
  iteration('typescript', 'apcIteration', 50, 2),
  iteration('typescript', 'dhbmIteration', 10, 2),
  iteration('typescript', 'dhbmIteration', 50, 2),
  // Where WebAssembly SIMD is not available: the same threshold as the kernels'.
  plainLoops('apcIteration', 10, 2),
  plainLoops('apcIteration', 50, 2),
  plainLoops('dhbmIteration', 10, 2),
  plainLoops('dhbmIteration', 50, 2),
  analysis('typescript', 2),
  analysis('typescript', 2, 2000),
  {
    kind: 'memory',
    id: 'memory',
    description: 'memory: the analysis holds a few n x n matrices; completes at n = 3312',
    maxHeldNxN: 4,
    heldFromN: 2000,
    completes: { problem: 'sherman5-m10', label: 'sherman5', n: 3312 },
  },
  { kind: 'service', id: 'end-to-end', minJobsPerSecond: 200, maxP99Ms: 250 },
  ...sparseTargets('native'),
  ...sparseTargets('typescript'),
  {
    kind: 'sparseMemory',
    id: 'sparse.memory',
    description: 'sparse: peak memory, Poisson n = 10^6, m = 100',
    problem: POISSON_1E6,
    maxBytes: 4 * 2 ** 30,
  },
  ...(['dense', 'csr'] as const).flatMap((storage) =>
    (['dhbm', 'apc'] as const).map((algorithm): JobPathTarget => ({
      kind: 'jobPath',
      id: `jobPath:${storage}:${algorithm}`,
      storage,
      algorithm,
      atMost: 1.2,
    })),
  ),
  ...(['dhbm', 'apc'] as const).map((algorithm): CheckpointCostTarget => ({
    kind: 'checkpointCost',
    id: `checkpointCost:${algorithm}`,
    algorithm,
    atMost: 1.02,
  })),
  ...(['dense', 'csr'] as const).flatMap((storage): TimeToSolutionTarget[] => [
    { kind: 'timeToSolution', id: `timeToSolution:perIteration:${storage}`, storage, measure: 'perIteration', within: 0.3 },
    { kind: 'timeToSolution', id: `timeToSolution:converged:${storage}`, storage, measure: 'converged', within: 2 },
  ]),
  { kind: 'multipleRhs', id: 'multipleRhs:dense', storage: 'dense', atMost: 0.4 },
  { kind: 'multipleRhs', id: 'multipleRhs:csr', storage: 'csr', atMost: 0.6 },
  {
    kind: 'httpSolve',
    id: 'httpSolve',
    description: 'full APC solve through HTTP (upload, job, trace, solution), Poisson',
    tolerance: 1e-8,
  },
  {
    kind: 'study',
    id: 'study:ratioToNumpy',
    description: 'Experiment 1 through HTTP, 2 worker processes, against the NumPy script on one core',
    measure: 'ratioToNumpy',
    threshold: 1,
  },
  {
    kind: 'study',
    id: 'study:seconds',
    description: 'Experiment 1 through HTTP, 2 worker processes: wall time',
    measure: 'seconds',
    threshold: 60,
  },
  {
    kind: 'study',
    id: 'study:scaling',
    description: 'Experiment 1 through HTTP: 1 worker process over 2 (separate processes, one Redis)',
    measure: 'scaling',
    threshold: 1.6,
  },
  {
    kind: 'splitAnalysis',
    id: 'splitAnalysis',
    description: 'dense analysis split over 2 worker processes against one worker',
    atLeast: 1.5,
  },
  {
    kind: 'fairness',
    id: 'fairness',
    description: "small jobs' start latency (p99) while another key's flood of long solves holds both regular worker slots",
    atMostMs: 5000,
  },
  {
    kind: 'agreement',
    id: 'agreement',
    description: `agreement: analysis values (${AGREEMENT_KEYS.map(([k]) => k).join(', ')}) on every problem`,
    threshold: "within the fixture tests' tolerances (see Agreement)",
  },
  {
    kind: 'fixtures',
    id: 'fixtures',
    description: 'agreement with the NumPy fixtures',
    threshold: 'all cases within the test tolerances',
  },
];

/** The id of a ratio target: what is timed, on which problem, for which backend. */
export function ratioTargetId(measure: RatioTarget['measure'], problem: string, backend: BackendName): string {
  const what = 'stage' in measure ? measure.stage : `plainLoops.${measure.plainLoops}`;
  return `${what}:${problem}:${backend}`;
}

/** One iteration on a Gaussian n = 2000 problem with m machines. */
function iteration(backend: BackendName, stage: IterationStage, m: number, atMost: number): RatioTarget {
  const problem = gaussianProblemName(ITERATION_N, m);
  return {
    kind: 'ratio',
    id: ratioTargetId({ stage }, problem, backend),
    description: `one ${ALGORITHM_OF[stage]} iteration, n = ${ITERATION_N}, m = ${m}`,
    backend,
    problem,
    measure: { stage },
    atMost,
    limitedBy: iterationLimit,
  };
}

/** The TypeScript backend's iteration on its plain loops (WebAssembly kernels off). */
function plainLoops(stage: IterationStage, m: number, atMost: number): RatioTarget {
  const problem = gaussianProblemName(ITERATION_N, m);
  return {
    kind: 'ratio',
    id: ratioTargetId({ plainLoops: stage }, problem, 'typescript'),
    description: `one ${ALGORITHM_OF[stage]} iteration, n = ${ITERATION_N}, m = ${m}`,
    backend: 'typescript',
    problem,
    measure: { plainLoops: stage },
    atMost,
    limitedBy: plainLoopsLimit,
  };
}

/** The full analysis of a Gaussian system (n = 1000 unless given), m = 10. */
function analysis(backend: BackendName, atMost: number, n = 1000): RatioTarget {
  const problem = gaussianProblemName(n, 10);
  return {
    kind: 'ratio',
    id: ratioTargetId({ stage: 'analysis' }, problem, backend),
    description: `full analysis, n = ${n}, m = 10`,
    backend,
    problem,
    measure: { stage: 'analysis' },
    atMost,
    limitedBy: analysisPhasesLimit,
  };
}

/** The ratio a run measured for the ratio target `id` (null when not measured); throws for an id TARGETS lacks. */
export function targetRatio(rows: TargetRow[], id: string): number | null {
  if (!TARGETS.some((t) => t.id === id)) throw new Error(`no target ${id} in TARGETS`);
  return rows.find((r) => r.id === id)?.ratio ?? null;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/** One row of the Targets table. */
export interface TargetRow {
  id: string;
  kind: Target['kind'];
  target: string;
  backend: string;
  measured: string;
  threshold: string;
  /** null: not measured in this run. */
  met: boolean | null;
  limits: string;
  /** Ratio targets: the measured ratio (null when not measured); null for the others. */
  ratio: number | null;
}

export function evaluateTargets(record: RunRecord): TargetRow[] {
  return TARGETS.flatMap((target): TargetRow[] => {
    switch (target.kind) {
      case 'ratio':
        return ratioRows(record, target);
      case 'memory':
        return record.backends.map((backend) => memoryRow(record, target, backend));
      case 'service':
        return [serviceRow(record, target)];
      case 'agreement':
        return agreementPairs(record).map(([a, b]) => agreementRow(record, target, a, b));
      case 'fixtures':
        return record.backends.map((backend) => fixturesRow(record, target, backend));
      case 'sparseRatio':
        return [sparseRatioRow(record, target)];
      case 'sparseMemory':
        return sparseMemoryRows(record, target);
      case 'jobPath':
        return record.backends.map((backend) => jobPathRow(record, target, backend));
      case 'checkpointCost':
        return record.backends.map((backend) => checkpointCostRow(record, target, backend));
      case 'timeToSolution':
        return record.backends.map((backend) => timeToSolutionRow(record, target, backend));
      case 'multipleRhs':
        return record.backends.map((backend) => multipleRhsRow(record, target, backend));
      case 'httpSolve':
        return [httpSolveRow(record, target)];
      case 'study':
        return [studyRow(record, target)];
      case 'splitAnalysis':
        return [splitAnalysisRow(record, target)];
      case 'fairness':
        return [fairnessRow(record, target)];
    }
  });
}

/** A ratio target measured: the problem, both sides' reports and times. */
export interface RatioMeasurement {
  problem: ProblemResult;
  backend: BackendName;
  stage: StageName;
  ours: SideReport;
  numpy: SideReport;
  /** Our time and NumPy's (seconds). */
  seconds: number;
  numpySeconds: number;
  ratio: number;
}

/** `measure` of `backend` on a problem of the run against NumPy's time for the same stage; null where either is missing. */
export function measureRatio(
  record: RunRecord,
  problemName: string,
  backend: BackendName,
  measure: RatioTarget['measure'],
): RatioMeasurement | null {
  const problem = findProblem(record, problemName);
  const ours = problem?.sides[backend];
  const numpy = problem?.sides.numpy;
  if (!problem || !isReport(ours) || !isReport(numpy)) return null;
  const stage = 'stage' in measure ? measure.stage : measure.plainLoops;
  const seconds = 'stage' in measure ? ours.stages[stage] : ours.plainLoops?.[measure.plainLoops];
  if (seconds === undefined) return null;
  const numpySeconds = numpy.stages[stage];
  return { problem, backend, stage, ours, numpy, seconds, numpySeconds, ratio: seconds / numpySeconds };
}

function ratioRows(record: RunRecord, target: RatioTarget): TargetRow[] {
  const row = {
    id: target.id,
    kind: target.kind,
    target: target.description,
    backend: 'plainLoops' in target.measure ? `${target.backend}, plain loops (LINALG_WASM=off)` : target.backend,
    threshold: `≤ ${target.atMost}`,
  };
  const available = record.backends.includes(target.backend);
  const m = available ? measureRatio(record, target.problem, target.backend, target.measure) : null;
  if (m === null) {
    if ('plainLoops' in target.measure) return [];
    const measured = available ? 'not measured in this run' : 'backend not available';
    return [{ ...row, measured, met: null, limits: '', ratio: null }];
  }
  const met = m.ratio <= target.atMost;
  return [
    {
      ...row,
      measured: `${m.ratio.toFixed(3)} (${formatSeconds(m.seconds)} vs ${formatSeconds(m.numpySeconds)})`,
      met,
      limits: met ? '' : target.limitedBy(m),
      ratio: m.ratio,
    },
  ];
}

function memoryRow(record: RunRecord, target: MemoryTarget, backend: string): TargetRow {
  const { problem, label, n } = target.completes;
  const completing = findProblem(record, problem);
  const completed = completing ? completing.sides[backend] : null;
  /** What the analysis holds beyond its inputs, in units of one n x n float64 matrix. */
  const held = (q: ProblemResult, side: string): number => {
    const report = q.sides[side];
    return isReport(report) ? report.analysisGrowthBytes / (q.spec.n * q.spec.n * FLOAT64_BYTES) : NaN;
  };
  const large = record.problems.filter((q) => q.spec.n >= target.heldFromN && isReport(q.sides[backend]));
  const worst = large.reduce<ProblemResult | null>((w, q) => (w === null || held(q, backend) > held(w, backend) ? q : w), null);
  const completion =
    completed === null
      ? `${label} not in this run`
      : isReport(completed)
        ? `${label} (n = ${n}) completed, peak RSS ${formatBytes(completed.peakRssBytes)}`
        : `${label} FAILED`;
  const numpyHeld = worst && isReport(worst.sides.numpy) ? ` (NumPy ${held(worst, 'numpy').toFixed(1)})` : '';
  const holds = worst
    ? `; the analysis holds at most ${held(worst, backend).toFixed(1)} n x n beyond its inputs${numpyHeld}, at ${worst.spec.name}`
    : '';
  return {
    id: target.id,
    kind: target.kind,
    target: target.description,
    backend,
    measured: completion + holds,
    threshold: `≤ ${target.maxHeldNxN} n x n beyond A, A_i, Q_i; n = ${n} completes`,
    met: completed === null || worst === null ? null : isReport(completed) && held(worst, backend) <= target.maxHeldNxN,
    limits: '',
    ratio: null,
  };
}

const meetsService = (target: ServiceTarget, l: MeasuredLoad): boolean =>
  l.throughput >= target.minJobsPerSecond && l.latencyMs !== null && l.latencyMs.p99 < target.maxP99Ms && l.failed === 0;

/** The level reported against the target: the highest throughput among levels meeting it, else the highest throughput. */
function headlineLoad(target: ServiceTarget, loads: MeasuredLoad[]): MeasuredLoad | null {
  if (loads.length === 0) return null;
  const meeting = loads.filter((l) => meetsService(target, l));
  const pool = meeting.length > 0 ? meeting : loads;
  return pool.reduce((best, l) => (l.throughput > best.throughput ? l : best));
}

function serviceRow(record: RunRecord, target: ServiceTarget): TargetRow {
  const row = {
    id: target.id,
    kind: target.kind,
    target: `end to end: ≥ ${target.minJobsPerSecond} jobs/s, p99 < ${target.maxP99Ms} ms`,
    backend: 'service',
    threshold: `≥ ${target.minJobsPerSecond} /s, p99 < ${target.maxP99Ms} ms`,
    limits: '',
    ratio: null,
  };
  const e2e = record.e2e;
  if (!e2e) return { ...row, measured: 'not run (--no-e2e)', threshold: '', met: null };
  const load = headlineLoad(target, e2e.loads);
  if (!load || !load.latencyMs) return { ...row, measured: `failed: ${e2e.error ?? 'no job succeeded'}`, met: false };
  const met = meetsService(target, load);
  const levels = e2e.loads.length > 1 ? `; best of ${e2e.loads.length} levels, see End to end` : '';
  return {
    ...row,
    backend: `service (${e2e.config.WORKER_CONCURRENCY} worker children)`,
    measured:
      `${load.throughput.toFixed(0)} jobs/s, p50 ${load.latencyMs.p50.toFixed(0)} ms, p99 ${load.latencyMs.p99.toFixed(0)} ms ` +
      `(${load.succeeded} jobs, ${load.concurrency} concurrent clients${levels})`,
    met,
    limits: met ? '' : serviceLimit(load, record.machine.cores, e2e.otherLoadCores),
  };
}

function agreementRow(record: RunRecord, target: AgreementTarget, a: string, b: string): TargetRow {
  const w = worstAgreement(record, a, b);
  const f = worstToleranceFraction(record, a, b);
  return {
    id: target.id,
    kind: target.kind,
    target: `${target.description}, ${a} vs ${b}`,
    backend: a,
    measured:
      w && f
        ? `largest relative difference ${formatExponential(w.worst)} (${w.key}, ${w.problem}); ` +
          `largest difference as a fraction of its tolerance ${formatExponential(f.fraction)} (${f.key}, ${f.problem})`
        : 'no comparable results',
    threshold: target.threshold,
    met: f ? f.fraction <= 1 : null,
    limits: '',
    ratio: null,
  };
}

function fixturesRow(record: RunRecord, target: FixturesTarget, backend: string): TargetRow {
  const f = record.fixtures[backend];
  return {
    id: target.id,
    kind: target.kind,
    target: target.description,
    backend,
    measured: fixtureSummary(f),
    threshold: target.threshold,
    met: f && !('error' in f) ? f.cases.every((c) => c.passed) : f ? false : null,
    limits: '',
    ratio: null,
  };
}

function sparseRatioRow(record: RunRecord, target: SparseRatioTarget): TargetRow {
  const row = {
    id: target.id,
    kind: target.kind,
    target: target.description,
    backend: target.backend,
    threshold: Number.isFinite(target.atMost) ? `≤ ${target.atMost} x SciPy` : 'completes',
    limits: '',
  };
  const problem = findSparseProblem(record, target.problem);
  if (!record.backends.includes(target.backend)) return { ...row, measured: 'backend not available', met: null, ratio: null };
  if (!problem) return { ...row, measured: 'not in this run', met: null, ratio: null };
  const ours = problem.sides[target.backend];
  const scipy = problem.sides.numpy;
  if (!isSparseReport(ours)) return { ...row, measured: `failed: ${ours?.error ?? 'no report'}`, met: false, ratio: null };
  const seconds = ours.stages[target.stage];
  if (seconds === undefined)
    return { ...row, measured: `not run (${target.stage} skipped for n = ${problem.spec.n})`, met: null, ratio: null };
  const scipySeconds = isSparseReport(scipy) ? scipy.stages[target.stage] : undefined;
  if (scipySeconds === undefined) {
    const met = !Number.isFinite(target.atMost) ? true : null;
    return { ...row, measured: `${formatSeconds(seconds)} (SciPy: ${isSparseReport(scipy) ? 'not run' : 'failed'})`, met, ratio: null };
  }
  const ratio = seconds / scipySeconds;
  const met = ratio <= target.atMost;
  return {
    ...row,
    measured: `${ratio.toFixed(3)} (${formatSeconds(seconds)} vs ${formatSeconds(scipySeconds)})`,
    met,
    limits: met ? '' : sparseLimit(target.stage, ours, isSparseReport(scipy) ? scipy : null),
    ratio,
  };
}

/** What the two sides ran a missed sparse stage on. */
function sparseLimit(
  stage: SparseStageName,
  ours: { environment: Record<string, string | number | null> },
  scipy: { dhbmVariants?: Record<string, number> } | null,
): string {
  const env = ours.environment;
  const on = `ours on the ${String(env.backend)} backend, ${String(env.storage)} storage`;
  switch (stage) {
    case 'dhbmIteration': {
      const variants = scipy?.dhbmVariants
        ? Object.entries(scipy.dhbmVariants)
            .map(([k, v]) => `${k} ${formatSeconds(v)}`)
            .join(', ')
        : '';
      return `${on}, ${String(env.dhbmThreads)} thread(s): one fused CSR pass per machine; SciPy's A.T @ (A @ x - b) (${variants}) is C loops over the same nonzeros`;
    }
    case 'apcIteration':
      return `${on}, ${String(env.apcThreads)} thread(s): per machine A_i v, two triangular solves with the Gram factor, A_i^T w, on every machine's n-vector (m n state); SciPy: SuperLU's solve`;
    case 'setup':
      return `${on}: our sparse Cholesky of each A_i A_i^T (minimum degree ordering) against SuperLU (C) through splu`;
    case 'analysis':
      return `${on}: Lanczos on the operators and sparse factorizations in ${String(env.backend)} against ARPACK and SuperLU (compiled)`;
  }
}

function sparseMemoryRows(record: RunRecord, target: SparseMemoryTarget): TargetRow[] {
  const base = {
    id: target.id,
    kind: target.kind,
    target: target.description,
    threshold: `< ${formatBytes(target.maxBytes)}`,
    limits: '',
    ratio: null,
  };
  const problem = findSparseProblem(record, target.problem);
  const rows: TargetRow[] = record.backends.map((backend) => {
    const side = problem?.sides[backend];
    if (!problem) return { ...base, backend, measured: 'not in this run', met: null };
    if (!isSparseReport(side)) return { ...base, backend, measured: `failed: ${side?.error ?? 'no report'}`, met: false };
    const analysisNote = side.stages.analysis === undefined ? 'setup and iterations, analysis not run' : 'setup, analysis and iterations';
    return {
      ...base,
      backend: `${backend} (library)`,
      measured: `peak RSS ${formatBytes(side.peakRssBytes)} (${analysisNote})`,
      met: side.peakRssBytes < target.maxBytes,
    };
  });
  const http = record.httpSolve;
  if (http && 'n' in http && http.n === findSparseProblem(record, target.problem)?.spec.n && http.peakServiceRssBytes !== null) {
    rows.push({
      ...base,
      backend: `service (${http.backend ?? '?'}), HTTP solve`,
      measured: `peak RSS of the service's processes ${formatBytes(http.peakServiceRssBytes)} (upload, analysis, APC solve)`,
      met: http.status === 'succeeded' ? http.peakServiceRssBytes < target.maxBytes : null,
    });
  }
  return rows;
}

function jobPathRow(record: RunRecord, target: JobPathTarget, backend: string): TargetRow {
  const algorithm = target.algorithm === 'apc' ? 'APC' : 'D-HBM';
  const row = {
    id: target.id,
    kind: target.kind,
    target: `job path: one ${algorithm} iteration through a job vs the library (${target.storage})`,
    backend,
    threshold: `≤ ${target.atMost} x the library`,
    limits: '',
  };
  const report = record.jobPath?.[backend];
  if (!report) return { ...row, measured: 'not run', met: null, ratio: null };
  if (!('cases' in report)) return { ...row, measured: `failed: ${report.error}`, met: false, ratio: null };
  const c = report.cases.find((x) => x.storage === target.storage && x.algorithm === target.algorithm);
  if (!c)
    return { ...row, measured: `not measured${report.error ? ` (${report.error})` : ''}`, met: report.error ? false : null, ratio: null };
  const met = c.ratio <= target.atMost;
  return {
    ...row,
    target: `${row.target}, ${c.problem}`,
    measured:
      `${c.ratio.toFixed(3)} (${c.jobMsPerIteration.toFixed(3)} ms vs ${c.libraryMsPerIteration.toFixed(3)} ms per iteration, ${c.iterations} iterations` +
      // Records before interleaving have one round and no median.
      (c.rounds === undefined ? ')' : `; best of ${c.rounds} interleaved rounds, median ratio ${c.medianRatio.toFixed(3)})`),
    met,
    limits: met
      ? ''
      : `the library's run used ${c.libraryThreads} thread(s); the job's child shares the machine with the service, Redis and other processes`,
    ratio: c.ratio,
  };
}

function checkpointCostRow(record: RunRecord, target: CheckpointCostTarget, backend: string): TargetRow {
  const algorithm = target.algorithm === 'apc' ? 'APC' : 'D-HBM';
  const row = {
    id: target.id,
    kind: target.kind,
    target: `checkpoints: a ${algorithm} run's time with checkpoints vs without`,
    backend,
    threshold: `≤ ${target.atMost} x`,
    limits: '',
  };
  const report = record.checkpointCost?.[backend];
  if (!report) return { ...row, measured: 'not run', met: null, ratio: null };
  if (!('cases' in report)) return { ...row, measured: `failed: ${report.error}`, met: false, ratio: null };
  const c = report.cases.find((x) => x.algorithm === target.algorithm);
  if (!c)
    return { ...row, measured: `not measured${report.error ? ` (${report.error})` : ''}`, met: report.error ? false : null, ratio: null };
  // Decided by the checkpoints' own measured cost: runs of a minute on a shared machine differ by more (bench/checkpointCost.ts).
  const met = c.impliedRatio <= target.atMost;
  const runSeconds = c.withoutCheckpointsMs.reduce((sum, ms) => sum + ms, 0) / c.withoutCheckpointsMs.length / 1000;
  return {
    ...row,
    target: `${row.target}, ${c.problem}, every ${report.intervalMs / 1000} s`,
    measured:
      `${c.impliedRatio.toFixed(6)} from one checkpoint's cost (${formatBytes(c.checkpointBytes)}, ${c.checkpointMs.toFixed(2)} ms: snapshot ` +
      `${c.snapshotMs.toFixed(2)} ms, encoding ${Math.max(c.encodeMs, c.inRunEncodeMs).toFixed(2)} ms, write ${c.writeMs.toFixed(2)} ms); ` +
      `${c.rounds} interleaved round(s) of ${runSeconds.toFixed(1)} s ` +
      `runs (${c.checkpointsPerRun} checkpoints each): ${c.ratio.toFixed(4)} wall time, ${c.cpuRatio.toFixed(4)} CPU time, with over without`,
    met,
    limits: met ? '' : 'the snapshot copies the run state (APC on dense storage: m n doubles) and the encoding copies it again',
    ratio: c.impliedRatio,
  };
}

function multipleRhsRow(record: RunRecord, target: MultipleRhsTarget, backend: string): TargetRow {
  const row = {
    id: target.id,
    kind: target.kind,
    target: `several right-hand sides: an iteration over k of them per right-hand side vs a separate run's, all six algorithms, ${target.storage}`,
    backend,
    threshold: `≤ ${target.atMost}`,
    limits: '',
  };
  const report = record.multipleRhs?.[backend];
  if (!report) return { ...row, measured: 'not run', met: null, ratio: null };
  if (!('problems' in report)) return { ...row, measured: `failed: ${report.error}`, met: false, ratio: null };
  const problem = report.problems.find((p) => p.storage === target.storage);
  if (!problem || problem.rows.length === 0) return { ...row, measured: 'not measured', met: null, ratio: null };
  const worst = problem.rows.reduce((a, b) => (b.iterationRatio > a.iterationRatio ? b : a));
  const met = worst.iterationRatio <= target.atMost;
  return {
    ...row,
    target: `${row.target}, ${problem.problem}, k = ${problem.k}`,
    measured:
      `${problem.rows.map((r) => `${r.algorithm} ${r.iterationRatio.toFixed(2)}`).join(', ')} ` +
      `(CPU time: ${problem.rows.map((r) => r.cpuRatio.toFixed(2)).join(', ')}; threads ${report.threads}, best of the rounds)`,
    met,
    limits: met
      ? ''
      : `${worst.algorithm}: ${worst.blockIterationMs.toFixed(3)} ms an iteration of the block against ${worst.oneIterationMs.toFixed(3)} ms ` +
        `of one vector's run; ` +
        (target.storage === 'dense'
          ? `the block's products are bound by the multiply-add rate where one vector's read the matrix from memory`
          : `the block's n x k blocks (X, B, the machines' terms, a method's carried block) stream through memory at every ` +
            `iteration (the step phase alone reads or writes five of them) where one vector's stay in cache`) +
        ' (docs/performance.md, "Several right-hand sides in the recorded bench")',
    ratio: worst.iterationRatio,
  };
}

/** The prediction farthest from its measurement either way (predicted / measured furthest from 1 in log). */
function farthestFromOne<T extends { ratio: number }>(ratios: readonly T[]): T {
  return ratios.reduce((a, b) => (Math.abs(Math.log(b.ratio)) > Math.abs(Math.log(a.ratio)) ? b : a));
}

/**
 * What a second calibration, taken after the rounds, says of a missed per-iteration row: the ratios predicted with
 * it and the CSR pass and dense rates of both, so a row mispriced by a phase of the host's memory rate
 * (docs/performance.md, "The host's memory phases") reads as such. Records before it lack it.
 */
function calibratedAfter(problem: TimeToSolutionProblem, within: number): string {
  const before = problem.calibration;
  const after = problem.calibrationAfter;
  const ratios = problem.perIteration.flatMap((t) =>
    t.predictedAfterSeconds === undefined ? [] : [{ ...t, ratio: t.predictedAfterSeconds / t.measuredSeconds }],
  );
  if (!before || !after || ratios.length !== problem.perIteration.length)
    return 'this record has no calibration taken after the rounds (docs/performance.md)';
  const worst = farthestFromOne(ratios);
  const rates =
    `CSR pass ${(before.bytesPerSecondInCache / 1e9).toFixed(1)} -> ${(after.bytesPerSecondInCache / 1e9).toFixed(1)} GB/s, ` +
    `dense ${(before.flopsPerSecondInCache / 1e9).toFixed(1)} -> ${(after.flopsPerSecondInCache / 1e9).toFixed(1)} GFLOP/s in cache`;
  return ratios.every((t) => Math.abs(t.ratio - 1) <= within)
    ? `priced by a calibration taken after the rounds every ratio is within ${within * 100}% (worst ${worst.algorithm} ` +
        `${worst.ratio.toFixed(2)}; ${rates}): the host's memory rate moved between the two (docs/performance.md, "The host's memory phases")`
    : `priced by a calibration taken after the rounds the worst is ${worst.algorithm} at ${worst.ratio.toFixed(2)} (${rates}) (docs/performance.md)`;
}

function timeToSolutionRow(record: RunRecord, target: TimeToSolutionTarget, backend: string): TargetRow {
  const perIteration = target.measure === 'perIteration';
  const row = {
    id: target.id,
    kind: target.kind,
    target: perIteration
      ? `time to solution: predicted seconds per iteration vs measured, all six algorithms, ${target.storage}`
      : `time to solution: predicted time of APC and D-HBM runs to 1e-8 vs measured, ${target.storage}`,
    backend,
    threshold: perIteration ? `within ${target.within * 100}%` : `within ${target.within} x`,
    limits: '',
  };
  const report = record.timeToSolution?.[backend]?.[target.measure];
  if (!report) return { ...row, measured: 'not run', met: null, ratio: null };
  if (!('problems' in report)) return { ...row, measured: `failed: ${report.error}`, met: false, ratio: null };
  const problem = report.problems.find((p) => p.storage === target.storage);
  if (!problem) return { ...row, measured: 'not measured', met: null, ratio: null };
  if (perIteration) {
    const ratios = problem.perIteration.map((t) => ({ ...t, ratio: t.predictedSeconds / t.measuredSeconds }));
    const worst = farthestFromOne(ratios);
    const met = ratios.every((t) => Math.abs(t.ratio - 1) <= target.within);
    return {
      ...row,
      target: `${row.target}, ${problem.problem}`,
      measured:
        `predicted / measured: ${ratios.map((t) => `${t.algorithm} ${t.ratio.toFixed(2)}`).join(', ')} ` +
        `(threads ${[...new Set(ratios.map((t) => t.threads))].join('/')}, rounds' spread up to ${Math.max(...ratios.map((t) => t.spread)).toFixed(2)}, ` +
        `phase synchronisation ${(problem.phaseSyncSeconds * 1e6).toFixed(0)} us` +
        // Records from before the threads' slowdown was measured lack it.
        (problem.calibration?.threadSlowdown === undefined
          ? ''
          : `, threads' slowdown ${problem.calibration.threadSlowdown[problem.storage].toFixed(2)}`) +
        (problem.calibration
          ? `; calibrated in cache: dense ${(problem.calibration.flopsPerSecondInCache / 1e9).toFixed(1)} GFLOP/s` +
            // Records from before the product passes and the triangle were calibrated lack them.
            (problem.calibration.productFlopsPerSecondInCache === undefined
              ? ', '
              : ` (product passes ${(problem.calibration.productFlopsPerSecondInCache / 1e9).toFixed(1)} GFLOP/s, ` +
                `${(problem.calibration.triangleEntrySeconds * 1e9).toFixed(2)} ns a triangle entry), `) +
            `CSR pass ${(problem.calibration.bytesPerSecondInCache / 1e9).toFixed(1)} GB/s, loops ${(problem.calibration.csrLoopBytesPerSecondInCache / 1e9).toFixed(1)} GB/s, ` +
            `factor solves ${(problem.calibration.factorBytesPerSecondInCache / 1e9).toFixed(1)} GB/s` +
            (problem.calibration.factorColumnSeconds === undefined
              ? ')'
              : ` and ${(problem.calibration.factorColumnSeconds * 1e9).toFixed(1)} ns a column)`)
          : ')'),
      met,
      limits: met
        ? ''
        : `${worst.algorithm} at ${worst.ratio.toFixed(2)}: measured ${(worst.measuredSeconds * 1e3).toFixed(3)} ms against ${(worst.predictedSeconds * 1e3).toFixed(3)} ms predicted, ` +
          `its rounds ${worst.spread.toFixed(2)}x apart; ${calibratedAfter(problem, target.within)}`,
      ratio: worst.ratio,
    };
  }
  const runs = problem.converged.filter((r) => r.status === 'converged' && r.predictedSeconds !== null);
  if (runs.length === 0)
    return {
      ...row,
      measured: `no run converged: ${problem.converged.map((r) => `${r.algorithm} ${r.status}`).join(', ')}`,
      met: null,
      ratio: null,
    };
  const ratios = runs.map((r) => ({ ...r, ratio: (r.predictedSeconds ?? 0) / r.measuredSeconds }));
  const met = ratios.every((r) => r.ratio <= target.within && r.ratio >= 1 / target.within);
  const worst = farthestFromOne(ratios);
  const notConverged = problem.converged.filter((r) => r.status !== 'converged');
  return {
    ...row,
    target: `${row.target}, ${problem.problem}`,
    measured:
      ratios
        .map(
          (r) =>
            `${r.algorithm} predicted ${String(r.predictedIterations)} it ${((r.predictedSeconds ?? 0) * 1e3).toFixed(0)} ms, ` +
            `measured ${r.iterations} it ${(r.measuredSeconds * 1e3).toFixed(0)} ms (${r.ratio.toFixed(2)})`,
        )
        .join('; ') +
      (notConverged.length > 0 ? `; ${notConverged.map((r) => `${r.algorithm} ${r.status} after ${r.iterations}`).join(', ')}` : ''),
    met,
    limits: met ? '' : `${worst.algorithm} at ${worst.ratio.toFixed(2)} of its measured time`,
    ratio: worst.ratio,
  };
}

function httpSolveRow(record: RunRecord, target: HttpSolveTarget): TargetRow {
  const row = {
    id: target.id,
    kind: target.kind,
    backend: 'service',
    threshold: `relative residual ≤ ${target.tolerance}`,
    limits: '',
    ratio: null,
  };
  const http = record.httpSolve;
  if (!http) return { ...row, target: target.description, measured: 'not run', met: null };
  if (!('n' in http)) return { ...row, target: target.description, measured: `failed: ${http.error}`, met: false };
  const described = `${target.description}, n = ${http.n}, m = ${http.m}`;
  const steps = `upload ${formatSeconds(http.seconds.upload)}, job ${formatSeconds(http.seconds.job)}, trace ${formatSeconds(http.seconds.trace)}, solution ${formatSeconds(http.seconds.solution)}`;
  if (http.error !== null)
    return {
      ...row,
      target: described,
      backend: `service (${http.backend ?? '?'})`,
      measured: `${http.status}: ${http.error} (${steps})`,
      met: false,
    };
  const met = http.status === 'succeeded' && http.relativeResidual !== null && http.relativeResidual <= target.tolerance;
  return {
    ...row,
    target: described,
    backend: `service (${http.backend ?? '?'}, ${http.storage ?? '?'})`,
    measured:
      `wall time ${formatSeconds(http.seconds.total)} (${steps}); ${http.iterations} iterations in ${formatSeconds(http.runSeconds)}, ` +
      `relative residual ${formatExponential(http.relativeResidual)}`,
    met,
    limits: met ? '' : `${http.iterations} iterations reached the cap before the tolerance`,
  };
}

// ---------------------------------------------------------------------------------------------
// What limits a missed target

/** Per iteration: what each side reads, and NumPy's flops (ours are 4 n^2: two products with Q_i or A_i). */
const ITERATION_WORK: Record<IterationStage, { passesNeeded: number; oursReads: string; numpyReads: string; numpyFlopsPerN2: number }> = {
  // Our APC reads each Q_i^T twice (its residual comes from R^T w_i); NumPy's reads each Q_i twice and A for the residual.
  apcIteration: { passesNeeded: 2, oursReads: 'Q_i^T read twice', numpyReads: '3: Q_i twice + A for the residual', numpyFlopsPerN2: 6 },
  // Our D-HBM reads A once (fused A^T (A x - b)); NumPy's twice, with two gemv.
  dhbmIteration: { passesNeeded: 1, oursReads: 'one fused pass over A', numpyReads: '2: A x and A^T r', numpyFlopsPerN2: 4 },
};

const THREADS_OF: Record<IterationStage, string> = { apcIteration: 'apcThreads', dhbmIteration: 'dhbmThreads' };

/** Why an iteration is slower than NumPy's, from the measured stream-pass counts and flop rates. */
function iterationLimit(m: RatioMeasurement): string {
  if (m.stage !== 'apcIteration' && m.stage !== 'dhbmIteration') return '';
  const { ours, numpy } = m;
  const work = ITERATION_WORK[m.stage];
  const best = bestStream(m.problem.sides);
  const oursPasses = ours.stages[m.stage] / best;
  const numpyPasses = numpy.stages[m.stage] / best;
  const needed = work.passesNeeded;
  const n2 = m.problem.spec.n * m.problem.spec.n;
  const gflops = (flops: number, seconds: number): string => (flops / seconds / 1e9).toFixed(1);
  const iterationThreads = `${ours.environment[THREADS_OF[m.stage]] ?? 1} thread(s) (setting ${ours.environment.threads})`;
  const kernels = m.backend === 'native' ? "the addon's C row kernels" : 'the WebAssembly SIMD row kernels';
  const verdict =
    oursPasses <= 1.25 * needed
      ? `memory bandwidth: ours runs at the stream rate (${oursPasses.toFixed(1)} passes of A, ${needed} needed)`
      : `not memory bandwidth: ours takes ${oursPasses.toFixed(1)} stream passes of A where ${needed} ` +
        `${needed === 1 ? 'suffices' : 'suffice'} (${work.oursReads}), ${(oursPasses / needed).toFixed(1)}x the memory bound`;
  return (
    `${verdict}: ${gflops(4 * n2, ours.stages[m.stage])} GFlop/s on ${kernels} on ${iterationThreads}; ` +
    `NumPy ${numpyPasses.toFixed(1)} passes (it reads ${work.numpyReads}) ` +
    `at ${gflops(work.numpyFlopsPerN2 * n2, numpy.stages[m.stage])} GFlop/s on OpenBLAS ${numpy.environment.blasThreads ?? '?'} threads`
  );
}

/** The plain loops' flop rate, against the WebAssembly kernels' time for the same iteration. */
function plainLoopsLimit(m: RatioMeasurement): string {
  if (m.stage !== 'apcIteration' && m.stage !== 'dhbmIteration') return '';
  const gflops = ((4 * m.problem.spec.n * m.problem.spec.n) / m.seconds / 1e9).toFixed(1);
  return (
    `V8's scalar code, a bounds check per load: ${gflops} GFlop/s on ${m.ours.environment[THREADS_OF[m.stage]] ?? 1} thread(s); ` +
    `the WebAssembly SIMD kernels (the default) take ${formatSeconds(m.ours.stages[m.stage])}`
  );
}

/** The analysis phase by phase, ours against NumPy's. */
function analysisPhasesLimit(m: RatioMeasurement): string {
  const phases = (Object.keys(m.ours.analysisPhases) as (keyof AnalysisPhases)[])
    .map((k) => `${k} ${formatSeconds(m.ours.analysisPhases[k])} vs ${formatSeconds(m.numpy.analysisPhases[k])}`)
    .join(', ');
  return `phases (ours vs NumPy): ${phases}`;
}

/** What bounds the service's throughput at a level, from the CPU it and the load generator used. */
function serviceLimit(l: MeasuredLoad, cores: number, otherCores: number | null): string {
  const used = (l.serviceCores ?? 0) + l.loadCores + (otherCores ?? 0);
  const cpu =
    `the service's processes used ${l.serviceCores?.toFixed(2) ?? '?'} cores and the load generator ${l.loadCores.toFixed(2)} ` +
    `of the machine's ${cores}` +
    (otherCores !== null && otherCores > 0.05 ? `, other processes ${otherCores.toFixed(2)}` : '');
  return used >= 0.8 * cores
    ? `CPU: ${cpu}, so the cores are saturated; per job the cost is ${((1e3 * (l.serviceCores ?? 0)) / l.throughput).toFixed(1)} ms ` +
        "of service CPU (HTTP, validation, Redis/BullMQ round trips, the sandboxed worker's run, SSE)"
    : `not CPU (${cpu}): waiting (Redis/BullMQ hand-offs, WORKER_CONCURRENCY) bounds it; in a closed loop latency ≈ clients / throughput`;
}

const NOT_RUN = 'not run (npm run bench -- --studies --split-analysis)';

function studyRow(record: RunRecord, target: StudyTarget): TargetRow {
  const threshold =
    target.measure === 'scaling'
      ? `≥ ${target.threshold}`
      : target.measure === 'seconds'
        ? `≤ ${target.threshold} s`
        : `≤ ${target.threshold}`;
  const row = { id: target.id, kind: target.kind, target: target.description, backend: 'service', threshold, limits: '', ratio: null };
  const study = record.studies;
  if (!study) return { ...row, measured: NOT_RUN, met: null };
  if ('error' in study) return { ...row, measured: `failed: ${study.error}`, met: false };
  const { httpOneWorkerSeconds: one, httpTwoWorkersSeconds: two, numpySeconds: numpy } = study;
  const load = `${study.analyses} analyses, best of ${study.rounds}, load average ${study.loadAverage[0].toFixed(1)}`;
  if (target.measure === 'scaling') {
    if (study.scaling === null || one === null || two === null) return { ...row, measured: 'not measured', met: null };
    return {
      ...row,
      measured: `${study.scaling.toFixed(2)}x (${formatSeconds(one)} vs ${formatSeconds(two)}; median of rounds ${study.scalingMedian?.toFixed(2) ?? '?'}x; ${load})`,
      met: study.scaling >= target.threshold,
      // Linux autogroup: the processes of one session share one CPU share, so with other sessions busy a second worker mostly splits it.
      limits:
        study.scaling < target.threshold && study.loadAverage[0] > record.machine.cores + 1
          ? 'other sessions kept the cores busy (the benchmark session gets one share however many workers it runs)'
          : '',
    };
  }
  if (two === null) return { ...row, measured: 'not measured', met: null };
  if (target.measure === 'seconds') return { ...row, measured: `${formatSeconds(two)} (${load})`, met: two <= target.threshold };
  if (study.ratioToNumpy === null || numpy === null) return { ...row, measured: 'not measured', met: null };
  return {
    ...row,
    measured: `${study.ratioToNumpy.toFixed(3)} (${formatSeconds(two)} vs ${formatSeconds(numpy)}; ${load})`,
    met: study.ratioToNumpy <= target.threshold,
  };
}

function splitAnalysisRow(record: RunRecord, target: SplitAnalysisTarget): TargetRow {
  const row = { id: target.id, kind: target.kind, backend: 'service', threshold: `≥ ${target.atLeast}x`, limits: '', ratio: null };
  const split = record.splitAnalysis;
  if (!split) return { ...row, target: target.description, measured: NOT_RUN, met: null };
  if ('error' in split) return { ...row, target: target.description, measured: `failed: ${split.error}`, met: false };
  return {
    ...row,
    target: `${target.description}, n = ${split.n}, m = ${split.m}`,
    measured: `${split.speedup.toFixed(2)}x (${formatSeconds(split.oneWorkerSeconds)} vs ${formatSeconds(split.splitSeconds)} on ${split.workers} workers)`,
    met: split.speedup >= target.atLeast,
  };
}

function fairnessRow(record: RunRecord, target: FairnessTarget): TargetRow {
  const row = {
    id: target.id,
    kind: target.kind,
    target: target.description,
    backend: 'service',
    threshold: `≤ ${target.atMostMs} ms`,
    ratio: null,
  };
  const fairness = record.fairness;
  if (!fairness) return { ...row, measured: 'not run (npm run bench -- --fairness)', met: null, limits: '' };
  if ('error' in fairness) return { ...row, measured: `failed: ${fairness.error}`, met: false, limits: '' };
  return {
    ...row,
    measured:
      `p50 ${fairness.p50Ms} ms, p99 ${fairness.p99Ms} ms, max ${fairness.maxMs} ms (${fairness.smallJobs} small jobs of ${fairness.keys} keys ` +
      `under ${fairness.flood} long solves of one key; load average ${fairness.loadAverage[0].toFixed(1)})`,
    met: fairness.p99Ms <= target.atMostMs && fairness.floodRunningAtEnd >= 2,
    limits: fairness.floodRunningAtEnd < 2 ? 'the flood no longer held both regular slots at the end' : '',
  };
}
