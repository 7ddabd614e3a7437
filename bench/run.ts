/**
 * `npm run bench`: the performance benchmark, side by side with NumPy, in one run.
 *
 * For every problem (Gaussian mean-1 matrices n = 250..2000, m = 10 and 50; olm1000, 1138_bus,
 * sherman5 with m = 10) the matrix and partition are written once to bench/.cache, then timed in
 * separate child processes (so peak RSS is per problem and per side): bench/stages.ts once per
 * available backend (TypeScript always, native when the addon is built) and bench/reference.py.
 * Then each backend's agreement with the NumPy fixtures (bench/fixtures.ts), and the service end
 * to end: `node --import tsx src/main.ts` (embedded Redis) loaded by bench/load.ts from a second
 * process. Results: a table on stdout, bench/results.md (and the raw numbers in bench/.cache/results.json).
 *
 *   node --import tsx bench/run.ts [--quick] [--problems a,b | none] [--backends typescript,native]
 *     [--solve-budget 5] [--max-solve-iterations 100000] [--repeat-scale 1]
 *     [--no-e2e] [--e2e-jobs 2000] [--e2e-seconds 30] [--e2e-concurrency 8,16,32,64] [--no-fixtures]
 *     [--wait-quiet 30] [--retry-noisy 1] [--out file] [--render results.json]
 * --wait-quiet: before each problem and the load test, wait (at most that long) for other processes
 * to leave the cores idle; --retry-noisy: repeat a problem during which they used > 0.25 core.
 * --render: only re-render the report from the raw results of an earlier run (bench/.cache/results.json).
 * --quick: two small problems, fewer repetitions, 1 s solves, a short load test, output to
 * bench/.cache/results-quick.md (bench/results.md stays the full run's).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { backendSupport, type BackendName } from './backends.js';
import type { AnalysisPhases, ProblemFile, SideReport, SolveReport, StageName } from './common.js';
import { FLOAT64_BYTES, STAGE_NAMES, formatBytes, formatRatio, formatSeconds } from './common.js';
import type { FixtureReport } from './fixtures.js';
import type { LoadReport } from './load.js';
import { defaultProblems, problemByName, type ProblemDefinition, type RepetitionPolicy, writeProblemCache } from './problems.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH = join(ROOT, 'bench');
const CACHE = join(BENCH, '.cache');

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
const e2e = {
  enabled: !args['no-e2e'],
  jobs: Number(args['e2e-jobs'] ?? (quick ? 300 : 2000)),
  seconds: Number(args['e2e-seconds'] ?? (quick ? 10 : 30)),
  /** Closed-loop client counts, one load run each against the same service. */
  concurrency: (args['e2e-concurrency'] ?? (quick ? '16' : '8,16,32,64')).split(',').map(Number),
  n: 50,
  m: 5,
};
/** Other load on a shared machine: wait for quiet before each timed part, repeat a disturbed problem. */
const quiet = {
  waitSeconds: Number(args['wait-quiet'] ?? (quick ? 0 : 30)),
  retries: Number(args['retry-noisy'] ?? (quick ? 0 : 1)),
};
const outFile = resolve(args.out ?? (quick ? join(CACHE, 'results-quick.md') : join(BENCH, 'results.md')));

// ---------------------------------------------------------------------------------------------
// Child processes

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

function runChild(command: string, argv: string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<ChildResult> {
  return new Promise((resolvePromise) => {
    const t0 = performance.now();
    const child = spawn(command, argv, { cwd: ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    // A command that cannot start (e.g. no python3) ends like a failed one.
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, stdout, stderr: `${stderr}${error.message}`, seconds: (performance.now() - t0) / 1e3 });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, seconds: (performance.now() - t0) / 1e3 });
    });
  });
}

/** The JSON object on the last non-empty stdout line of a child, or an error naming what went wrong. */
function lastJson<T>(result: ChildResult, what: string): T | { error: string } {
  const line = result.stdout.trim().split('\n').pop() ?? '';
  if (result.code === 0 && line.startsWith('{')) return JSON.parse(line) as T;
  const tail = result.stderr.trim().split('\n').slice(-5).join(' | ');
  return { error: `${what} exited with ${result.code}: ${tail || '(no stderr)'}` };
}

const NODE_TSX = ['--import', 'tsx'];
/** The stage processes collect garbage before the memory baselines they take. */
const NODE_STAGES = [...NODE_TSX, '--expose-gc'];
const CHILD_TIMEOUT_MS = 20 * 60_000;

// ---------------------------------------------------------------------------------------------
// Machine

interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  caches: string;
  os: string;
  node: string;
  python: string;
  numpy: string;
  blas: string;
  /** Transparent huge pages setting (the bracketed choice of /sys/kernel/mm/transparent_hugepage/enabled). */
  thp: string;
  loadBefore: number[];
  loadAfter: number[];
}

function transparentHugePages(): string {
  try {
    return /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function osName(): string {
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return `${pretty ? pretty[1] : os.type()}, kernel ${os.release()}`;
  } catch {
    return `${os.type()} ${os.release()}`;
  }
}

async function cacheSizes(): Promise<string> {
  const result = await runChild('lscpu', []);
  if (result.code !== 0) return 'unknown';
  return result.stdout
    .split('\n')
    .filter((line) => /^L[123]\w* cache:/.test(line))
    .map((line) => line.replace(/\s+/g, ' ').replace(' cache:', ''))
    .join(', ');
}

// ---------------------------------------------------------------------------------------------
// Other load on the machine: CPU time all processes used (/proc/stat) minus what this process and
// its finished children used (/proc/self/stat utime, stime, cutime, cstime), both in clock ticks.

interface CpuSnapshot {
  machineBusyTicks: number;
  oursTicks: number;
  at: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuSnapshot(): CpuSnapshot | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    const busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + (cpu[7] ?? 0);
    const self = readFileSync('/proc/self/stat', 'utf8');
    const fields = self
      .slice(self.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // Fields after the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    const ours = fields[11] + fields[12] + fields[13] + fields[14];
    return { machineBusyTicks: busy, oursTicks: ours, at: performance.now() };
  } catch {
    return null;
  }
}

/** Average number of cores other processes kept busy between two snapshots. */
function foreignCores(from: CpuSnapshot | null, to: CpuSnapshot | null): number | null {
  if (!from || !to || to.at <= from.at) return null;
  const seconds = (to.at - from.at) / 1e3;
  return Math.max(0, (to.machineBusyTicks - from.machineBusyTicks - (to.oursTicks - from.oursTicks)) / TICKS_PER_SECOND / seconds);
}

/** CPU ticks used so far by a process and all its descendants alive now (the service: API, worker children, redis-server). */
function treeCpuTicks(rootPid: number): number | null {
  try {
    const stats = new Map<number, { ppid: number; ticks: number }>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat
          .slice(stat.lastIndexOf(')') + 2)
          .split(' ')
          .map(Number);
        stats.set(Number(entry), { ppid: fields[1], ticks: fields[11] + fields[12] });
      } catch {
        // the process ended meanwhile
      }
    }
    const inTree = (pid: number): boolean => {
      for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
        if (p === rootPid) return true;
        p = stats.get(p)?.ppid ?? 0;
      }
      return false;
    };
    let ticks = 0;
    for (const [pid, s] of stats) if (inTree(pid)) ticks += s.ticks;
    return ticks;
  } catch {
    return null;
  }
}

/** Other processes' load above which a part counts as disturbed (cores). */
const QUIET_CORES = 0.1;
const NOISY_CORES = 0.25;

/** Waits (up to maxSeconds) for a 2 s window in which other processes use under QUIET_CORES; returns the last measurement. */
async function waitForQuiet(maxSeconds: number): Promise<number | null> {
  if (maxSeconds <= 0) return null;
  const deadline = performance.now() + maxSeconds * 1e3;
  let waited = false;
  for (;;) {
    const from = cpuSnapshot();
    await new Promise((r) => setTimeout(r, 2000));
    const load = foreignCores(from, cpuSnapshot());
    if (load === null || load < QUIET_CORES || performance.now() > deadline) {
      if (waited)
        log(
          `  ${load !== null && load < QUIET_CORES ? 'quiet now' : 'still busy, going on'} (other processes: ${load?.toFixed(2) ?? '?'} cores)`,
        );
      return load;
    }
    if (!waited) log(`  waiting up to ${maxSeconds} s for a quiet machine: other processes use ${load.toFixed(2)} cores`);
    waited = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Per problem

type SideOutcome = SideReport | { error: string };

interface ProblemResult {
  spec: ProblemFile;
  /** By side: 'typescript', 'native', 'numpy'. */
  sides: Record<string, SideOutcome>;
  /** Cores other processes kept busy while this problem ran (null where /proc is unavailable). */
  otherLoadCores: number | null;
  /** Runs made (more than 1 when a run was disturbed by other load and repeated; the quietest is kept). */
  attempts: number;
}

const isReport = (s: SideOutcome | undefined): s is SideReport => s !== undefined && !('error' in s);

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Runs a problem; a run during which other processes used more than NOISY_CORES is repeated (up to `retries` times) and the quietest kept. */
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

const STAGE_LABELS: Record<StageName, string> = {
  setup: 'partition + bases (QR of each A_i^T)',
  analysis: 'full analysis',
  streamMatrix: 'stream A once',
  apcIteration: 'one APC iteration',
  dhbmIteration: 'one D-HBM iteration',
  apcSolve: 'APC solve to 1e-8 (capped)',
  dhbmSolve: 'D-HBM solve to 1e-8 (capped)',
};

/** Per iteration for the solves, so that runs cut by the budget still compare. */
function secondsPerIteration(s: SolveReport): number {
  return s.iterations > 0 ? s.seconds / s.iterations : NaN;
}

function printProblem(result: ProblemResult, backends: BackendName[]): void {
  const { spec, sides } = result;
  const numpy = sides.numpy;
  log(`\n${spec.name} (n = ${spec.n}, m = ${spec.m})`);
  for (const side of [...backends, 'numpy']) {
    const s = sides[side];
    if (!isReport(s)) log(`  ${side}: FAILED ${s?.error ?? ''}`);
  }
  const header = [
    'stage'.padEnd(38),
    ...backends.map((b) => b.padStart(11)),
    'numpy'.padStart(11),
    ...backends.map((b) => `${b}/np`.padStart(15)),
  ];
  log(`  ${header.join(' ')}`);
  for (const stage of STAGE_NAMES) {
    const time = (side: string): number | null => (isReport(sides[side]) ? sides[side].stages[stage] : null);
    const ratio = (side: string): number | null => {
      const ours = sides[side];
      if (!isReport(ours) || !isReport(numpy)) return null;
      if (stage === 'apcSolve' || stage === 'dhbmSolve') return secondsPerIteration(ours[stage]) / secondsPerIteration(numpy[stage]);
      return ours.stages[stage] / numpy.stages[stage];
    };
    const row = [
      STAGE_LABELS[stage].padEnd(38),
      ...backends.map((b) => formatSeconds(time(b)).padStart(11)),
      formatSeconds(time('numpy')).padStart(11),
      ...backends.map((b) => `${formatRatio(ratio(b))}${stage.endsWith('Solve') ? ' /it' : ''}`.padStart(15)),
    ];
    log(`  ${row.join(' ')}`);
  }
  const rss = [...backends, 'numpy'].map((side) => `${side} ${isReport(sides[side]) ? formatBytes(sides[side].peakRssBytes) : '—'}`);
  log(
    `  peak RSS: ${rss.join(', ')}; other processes used ${result.otherLoadCores === null ? '?' : result.otherLoadCores.toFixed(2)} cores meanwhile`,
  );
}

// ---------------------------------------------------------------------------------------------
// End to end

/** A load level with the CPU the service's process tree and the load generator used meanwhile (cores, averaged over the level). */
type MeasuredLoad = LoadReport & { serviceCores: number | null; loadCores: number };

interface E2eResult {
  config: Record<string, string | number>;
  otherLoadCores: number | null;
  /** One per concurrency level. */
  loads: MeasuredLoad[];
  error: string | null;
  serviceStartSeconds: number;
}

function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePromise(port));
    });
  });
}

async function waitReady(url: string, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('the service exited before it was ready');
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

async function runEndToEnd(): Promise<E2eResult> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port) };
  delete env.REDIS_URL; // the service starts its private redis-server
  const config = loadConfig(env);
  const shown: Record<string, string | number> = {
    start: 'node --import tsx src/main.ts (API + one worker + embedded redis-server)',
    WORKER_CONCURRENCY: config.WORKER_CONCURRENCY,
    PROGRESS_INTERVAL_MS: config.PROGRESS_INTERVAL_MS,
    JOB_ATTEMPTS: config.JOB_ATTEMPTS,
    LOG_LEVEL: config.LOG_LEVEL,
    REDIS: 'embedded (REDIS_URL unset)',
  };
  const serviceLog = join(CACHE, 'service.log');
  const logFd = openSync(serviceLog, 'w');
  const t0 = performance.now();
  const before = cpuSnapshot();
  const service = spawn(process.execPath, [...NODE_TSX, join(ROOT, 'src', 'main.ts')], { cwd: ROOT, env, stdio: ['ignore', logFd, logFd] });
  let exited = false;
  const exit = new Promise<void>((r) => service.on('exit', () => ((exited = true), r())));
  const baseUrl = `http://127.0.0.1:${port}`;
  const loads: MeasuredLoad[] = [];
  let error: string | null = null;
  let serviceStartSeconds = NaN;
  try {
    await waitReady(`${baseUrl}/readyz`, 60_000, () => exited);
    serviceStartSeconds = (performance.now() - t0) / 1e3;
    log(
      `\nend to end: service ready on ${baseUrl} after ${serviceStartSeconds.toFixed(1)} s; per level at most ${e2e.jobs} jobs / ${e2e.seconds} s`,
    );
    for (const concurrency of e2e.concurrency) {
      const serviceTicksBefore = service.pid ? treeCpuTicks(service.pid) : null;
      const result = await runChild(
        process.execPath,
        [
          ...NODE_TSX,
          join(BENCH, 'load.ts'),
          '--base-url',
          baseUrl,
          '--jobs',
          String(e2e.jobs),
          '--seconds',
          String(e2e.seconds),
          '--concurrency',
          String(concurrency),
          '--n',
          String(e2e.n),
          '--m',
          String(e2e.m),
        ],
        { timeoutMs: (e2e.seconds + 120) * 1000 },
      );
      const parsed = lastJson<LoadReport>(result, 'load.ts');
      if ('error' in parsed) {
        error = parsed.error;
        break;
      }
      const serviceTicksAfter = service.pid ? treeCpuTicks(service.pid) : null;
      loads.push({
        ...parsed,
        serviceCores:
          serviceTicksBefore === null || serviceTicksAfter === null
            ? null
            : (serviceTicksAfter - serviceTicksBefore) / TICKS_PER_SECOND / result.seconds,
        loadCores: parsed.loadCpuSeconds / result.seconds,
      });
      log(`  concurrency ${concurrency}: ${describeLoad(loads[loads.length - 1])}`);
    }
  } catch (thrown) {
    error = (thrown as Error).message;
  } finally {
    // Clean shutdown (SIGTERM: stop accepting, finish jobs, stop the embedded Redis); kill only if it hangs.
    if (!exited) service.kill('SIGTERM');
    const killTimer = setTimeout(() => {
      if (!exited) service.kill('SIGKILL');
    }, 30_000);
    await exit;
    clearTimeout(killTimer);
    closeSync(logFd);
  }
  return { config: shown, loads, error, serviceStartSeconds, otherLoadCores: foreignCores(before, cpuSnapshot()) };
}

function describeLoad(l: MeasuredLoad): string {
  const latency = l.latencyMs
    ? `latency p50 ${l.latencyMs.p50.toFixed(0)} ms, p99 ${l.latencyMs.p99.toFixed(0)} ms`
    : 'no latency (nothing succeeded)';
  const cpu = `service ${l.serviceCores === null ? '?' : l.serviceCores.toFixed(2)} cores, load generator ${l.loadCores.toFixed(2)}`;
  return `${l.succeeded} succeeded, ${l.failed} failed, ${l.unfinished} unfinished in ${l.windowSeconds.toFixed(1)} s: ${l.throughput.toFixed(1)} jobs/s; ${latency}; CPU ${cpu}`;
}

const meetsE2e = (l: LoadReport): boolean => l.throughput >= 200 && l.latencyMs !== null && l.latencyMs.p99 < 250 && l.failed === 0;

/** The level reported against the target: the highest throughput among levels meeting it, else the highest throughput. */
function headlineLoad(loads: MeasuredLoad[]): MeasuredLoad | null {
  if (loads.length === 0) return null;
  const meeting = loads.filter(meetsE2e);
  const pool = meeting.length > 0 ? meeting : loads;
  return pool.reduce((best, l) => (l.throughput > best.throughput ? l : best));
}

// ---------------------------------------------------------------------------------------------
// Report

interface RunRecord {
  date: string;
  command: string;
  machine: Machine;
  policy: RepetitionPolicy;
  backends: BackendName[];
  backendNotes: string[];
  problems: ProblemResult[];
  fixtures: Record<string, FixtureReport | { error: string }>;
  e2e: E2eResult | null;
  quiet: { waitSeconds: number; retries: number };
  totalSeconds: number;
}

const rel = (a: number | null | undefined, b: number | null | undefined): number | null => {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  if (a === b) return 0;
  return Math.abs(a - b) / Math.max(Math.abs(b), Number.MIN_VALUE);
};
const exp2 = (x: number | null): string => (x === null || !Number.isFinite(x) ? '—' : x === 0 ? '0' : x.toExponential(1));

function md(rows: string[][]): string {
  const [head, ...body] = rows;
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function problemLabel(spec: ProblemFile): string {
  return `${spec.name.replace(/-m\d+$/, '')} (n=${spec.n}, m=${spec.m})`;
}

function sidesOf(record: RunRecord): string[] {
  return [...record.backends, 'numpy'];
}

/** Stage table: rows = problems, columns = each backend, NumPy and each ratio. */
function stageTable(record: RunRecord, stage: StageName): string {
  const { backends } = record;
  const head = ['problem', ...backends.map((b) => `ours (${b})`), 'NumPy', ...backends.map((b) => `ratio ${b}/NumPy`)];
  const rows = record.problems.map(({ spec, sides }) => {
    const numpy = sides.numpy;
    return [
      problemLabel(spec),
      ...backends.map((b) => (isReport(sides[b]) ? formatSeconds(sides[b].stages[stage]) : 'failed')),
      isReport(numpy) ? formatSeconds(numpy.stages[stage]) : 'failed',
      ...backends.map((b) => {
        const s = sides[b];
        return isReport(s) && isReport(numpy) ? formatRatio(s.stages[stage] / numpy.stages[stage]) : '—';
      }),
    ];
  });
  return md([head, ...rows]);
}

function solveTable(record: RunRecord, which: 'apcSolve' | 'dhbmSolve'): string {
  const head = [
    'problem',
    'side',
    'iterations',
    'final relative residual',
    'stopped by',
    'time',
    'time / iteration',
    'ratio / iteration vs NumPy',
    'time / iteration ÷ best single iteration',
  ];
  const rows: string[][] = [];
  for (const { spec, sides } of record.problems) {
    const numpy = sides.numpy;
    for (const side of sidesOf(record)) {
      const s = sides[side];
      if (!isReport(s)) continue;
      const r = s[which];
      rows.push([
        problemLabel(spec),
        side,
        String(r.iterations),
        exp2(r.relativeResidual),
        r.stop,
        formatSeconds(r.seconds),
        formatSeconds(secondsPerIteration(r)),
        side !== 'numpy' && isReport(numpy) ? formatRatio(secondsPerIteration(r) / secondsPerIteration(numpy[which])) : '',
        formatRatio(secondsPerIteration(r) / s.stages[which === 'apcSolve' ? 'apcIteration' : 'dhbmIteration']),
      ]);
    }
  }
  return md([head, ...rows]);
}

/** "A few n x n matrices": the analysis may hold at most this many beyond its inputs. */
const MEMORY_TARGET_NXN = 4;

function memoryTable(record: RunRecord): string {
  const sides = sidesOf(record);
  const head = [
    'problem',
    'one n x n',
    ...sides.map((s) => `peak RSS ${s}`),
    ...sides.map((s) => `analysis holds (n x n) ${s}`),
    ...sides.map((s) => `process growth (n x n) ${s}`),
  ];
  const rows = record.problems.map(({ spec, sides: results }) => {
    const matrixBytes = spec.n * spec.n * FLOAT64_BYTES;
    const each = (f: (r: SideReport) => string) => sides.map((s) => (isReport(results[s]) ? f(results[s]) : '—'));
    return [
      problemLabel(spec),
      formatBytes(matrixBytes),
      ...each((r) => formatBytes(r.peakRssBytes)),
      ...each((r) => (r.analysisGrowthBytes / matrixBytes).toFixed(1)),
      ...each((r) => ((r.peakRssBytes - r.baselineRssBytes) / matrixBytes).toFixed(1)),
    ];
  });
  return md([head, ...rows]);
}

function phaseTable(record: RunRecord): string {
  const phases: (keyof AnalysisPhases)[] = ['kappaAtA', 'principalAngles', 'kappaS', 'localAngles'];
  const sides = sidesOf(record);
  const head = ['problem', 'side', 'kappa(A^T A)', 'Gram blocks + principal angles', 'kappa(S)', 'local angles (row cosines)', 'total'];
  const rows: string[][] = [];
  for (const { spec, sides: results } of record.problems) {
    for (const side of sides) {
      const r = results[side];
      if (!isReport(r)) continue;
      rows.push([problemLabel(spec), side, ...phases.map((p) => formatSeconds(r.analysisPhases[p])), formatSeconds(r.stages.analysis)]);
    }
  }
  return md([head, ...rows]);
}

/** The fastest streaming pass over A measured on this machine for this problem (any side, any kernel). */
function bestStream(sides: Record<string, SideOutcome>): number {
  return Math.min(
    ...Object.values(sides)
      .filter(isReport)
      .map((s) => s.stages.streamMatrix),
  );
}

function rooflineTable(record: RunRecord): string {
  const sides = sidesOf(record);
  const head = [
    'problem',
    'A (MiB)',
    'stream: ours (1 thread)',
    'stream: NumPy sum / gemv',
    'best GB/s',
    ...sides.map((s) => `APC it. ${s} (passes)`),
    ...sides.map((s) => `D-HBM it. ${s} (passes)`),
  ];
  const rows = record.problems.map(({ spec, sides: results }) => {
    const best = bestStream(results);
    const bytes = spec.n * spec.n * FLOAT64_BYTES;
    // Our streaming pass runs in each backend's process; its speed varies between processes (page placement), so the best.
    const oursStream = Math.min(
      ...record.backends
        .map((b) => results[b])
        .filter(isReport)
        .map((r) => r.stream.sum8),
    );
    const np = results.numpy;
    const passes = (stage: 'apcIteration' | 'dhbmIteration') => (s: string) => {
      const r = results[s];
      return isReport(r) ? `${formatSeconds(r.stages[stage])} (${(r.stages[stage] / best).toFixed(1)})` : '—';
    };
    return [
      problemLabel(spec),
      (bytes / 2 ** 20).toFixed(1),
      formatSeconds(oursStream),
      isReport(np) ? `${formatSeconds(np.stream.sum)} / ${formatSeconds(np.stream.gemv)}` : '—',
      Number.isFinite(best) ? (bytes / best / 1e9).toFixed(1) : '—',
      ...sides.map(passes('apcIteration')),
      ...sides.map(passes('dhbmIteration')),
    ];
  });
  return md([head, ...rows]);
}

const AGREEMENT_KEYS: [string, (s: SideReport) => number | null][] = [
  ['kappaS', (s) => s.values.kappaS],
  ['kappaAtA', (s) => s.values.kappaAtA],
  ['thetaH', (s) => s.values.thetaH],
  ['phiMin', (s) => s.values.phiMin],
  ['rate APC', (s) => s.values.apc.rate],
  ['rate D-HBM', (s) => s.values.dhbm.rate],
  ['rowNormRatio', (s) => s.values.rowNormRatio],
];

function agreementPairs(record: RunRecord): [string, string][] {
  const pairs: [string, string][] = record.backends.map((b) => [b, 'numpy']);
  if (record.backends.includes('native')) pairs.push(['native', 'typescript']);
  return pairs;
}

function agreementTable(record: RunRecord): string {
  const head = ['problem', 'compared', ...AGREEMENT_KEYS.map(([k]) => k), 'eps·kappa(S)', 'eps·sqrt(kappa(A^T A))'];
  const rows: string[][] = [];
  for (const { spec, sides } of record.problems) {
    for (const [a, b] of agreementPairs(record)) {
      const x = sides[a];
      const y = sides[b];
      if (!isReport(x) || !isReport(y)) continue;
      rows.push([
        problemLabel(spec),
        `${a} vs ${b}`,
        ...AGREEMENT_KEYS.map(([, get]) => exp2(rel(get(x), get(y)))),
        exp2(Number.EPSILON * y.values.kappaS),
        exp2(Number.EPSILON * Math.sqrt(y.values.kappaAtA)),
      ]);
    }
  }
  return md([head, ...rows]);
}

/**
 * |x - y| as a fraction of the tolerance the fixture tests allow (test/solvers/analysis/fixtures.test.ts),
 * y taken as the reference: kappa(S) relative max(1e-6, 4 eps kappa(S)), kappa(A^T A) relative
 * max(1e-6, 8 eps sqrt(kappa)), angles 1e-9 absolute, rates 1e-9 absolute or the condition number's
 * tolerance times the rate's sensitivity, the row-norm ratio 1e-9 relative. <= 1: agreement.
 */
function toleranceFractions(x: SideReport, y: SideReport): [string, number][] {
  const a = x.values;
  const b = y.values;
  const tolS = Math.max(1e-6, 4 * Number.EPSILON * b.kappaS);
  const tolA = Math.max(1e-6, 8 * Number.EPSILON * Math.sqrt(b.kappaAtA));
  const relative = (u: number, v: number): number => Math.abs(u - v) / Math.abs(v);
  return [
    ['kappaS', relative(a.kappaS, b.kappaS) / tolS],
    ['kappaAtA', relative(a.kappaAtA, b.kappaAtA) / tolA],
    ['thetaH', Math.abs(a.thetaH - b.thetaH) / 1e-9],
    ['phiMin', a.phiMin === null || b.phiMin === null ? (a.phiMin === b.phiMin ? 0 : Infinity) : Math.abs(a.phiMin - b.phiMin) / 1e-9],
    ['rate APC', Math.abs(a.apc.rate - b.apc.rate) / Math.max(1e-9, tolS / Math.sqrt(b.kappaS))],
    ['rate D-HBM', Math.abs(a.dhbm.rate - b.dhbm.rate) / Math.max(1e-9, tolA / Math.sqrt(b.kappaAtA))],
    ['rowNormRatio', relative(a.rowNormRatio, b.rowNormRatio) / 1e-9],
  ];
}

function worstToleranceFraction(record: RunRecord, a: string, b: string): { fraction: number; key: string; problem: string } | null {
  let out: { fraction: number; key: string; problem: string } | null = null;
  for (const { spec, sides } of record.problems) {
    const x = sides[a];
    const y = sides[b];
    if (!isReport(x) || !isReport(y)) continue;
    for (const [key, fraction] of toleranceFractions(x, y)) {
      const f = Number.isNaN(fraction) ? Infinity : fraction;
      if (out === null || f > out.fraction) out = { fraction: f, key, problem: spec.name };
    }
  }
  return out;
}

/** Largest relative difference of the analysis values between two sides over all problems. */
function worstAgreement(record: RunRecord, a: string, b: string): { worst: number; key: string; problem: string } | null {
  let out: { worst: number; key: string; problem: string } | null = null;
  for (const { spec, sides } of record.problems) {
    const x = sides[a];
    const y = sides[b];
    if (!isReport(x) || !isReport(y)) continue;
    for (const [key, get] of AGREEMENT_KEYS) {
      const d = rel(get(x), get(y));
      if (d !== null && (out === null || d > out.worst)) out = { worst: d, key, problem: spec.name };
    }
  }
  return out;
}

function fixtureSummary(report: FixtureReport | { error: string } | undefined): string {
  if (!report) return 'not run';
  if ('error' in report) return `failed: ${report.error}`;
  const passed = report.cases.filter((c) => c.passed).length;
  const worst = report.cases.reduce((w, c) => ((c.worstFraction ?? Infinity) > (w.worstFraction ?? Infinity) ? c : w));
  return `${passed}/${report.cases.length} cases within the test tolerances (worst: ${worst.name}, ${worst.worstValue} at ${(worst.worstFraction ?? Infinity).toExponential(1)} of its tolerance)`;
}

// Targets --------------------------------------------------------------------------------------

interface TargetRow {
  target: string;
  backend: string;
  measured: string;
  threshold: string;
  met: boolean | null;
  limits: string;
}

function findProblem(record: RunRecord, name: string): ProblemResult | undefined {
  return record.problems.find((p) => p.spec.name === name);
}

/** Why an iteration is slower than NumPy's, from the measured stream-pass counts and flop rates. */
function iterationLimit(p: ProblemResult, side: string, stage: 'apcIteration' | 'dhbmIteration'): string {
  const ours = p.sides[side];
  const np = p.sides.numpy;
  if (!isReport(ours) || !isReport(np)) return '';
  const best = bestStream(p.sides);
  const oursPasses = ours.stages[stage] / best;
  const npPasses = np.stages[stage] / best;
  const needed = stage === 'apcIteration' ? 2 : 1;
  const npReads = stage === 'apcIteration' ? 3 : 2;
  // Dense flops per iteration: 4 n^2 for ours (two products with Q_i or A_i), NumPy's APC adds A xbar (6 n^2).
  const n2 = p.spec.n * p.spec.n;
  const gflops = (flops: number, seconds: number): string => (flops / seconds / 1e9).toFixed(1);
  const npFlops = stage === 'apcIteration' ? 6 * n2 : 4 * n2;
  const iterationThreads = `${ours.environment[stage === 'apcIteration' ? 'apcThreads' : 'dhbmThreads'] ?? 1} thread(s) (setting ${ours.environment.threads})`;
  const threads =
    side === 'native' ? `the addon's C row kernels on ${iterationThreads}` : `the WebAssembly SIMD row kernels on ${iterationThreads}`;
  const verdict =
    oursPasses <= 1.25 * needed
      ? `memory bandwidth: ours runs at the stream rate (${oursPasses.toFixed(1)} passes of A, ${needed} needed)`
      : `not memory bandwidth: ours takes ${oursPasses.toFixed(1)} stream passes of A where ${needed} ${needed === 1 ? 'suffices' : 'suffice'} (${stage === 'apcIteration' ? 'Q_i^T read twice' : 'one fused pass over A'}), ${(oursPasses / needed).toFixed(1)}x the memory bound`;
  return (
    `${verdict}: ${gflops(4 * n2, ours.stages[stage])} GFlop/s on ${threads}; ` +
    `NumPy ${npPasses.toFixed(1)} passes (it reads ${npReads}: ${stage === 'apcIteration' ? 'Q_i twice + A for the residual' : 'A x and A^T r'}) at ${gflops(npFlops, np.stages[stage])} GFlop/s on OpenBLAS ${np.environment.blasThreads ?? '?'} threads`
  );
}

/** The TypeScript backend's `stage` on its plain loops in problem p, with its ratio to NumPy; null when not measured. */
function plainLoopTime(
  p: ProblemResult | undefined,
  stage: 'apcIteration' | 'dhbmIteration',
): { seconds: number; ratio: number; ours: SideReport; np: SideReport } | null {
  const ours = p?.sides.typescript;
  const np = p?.sides.numpy;
  if (!isReport(ours) || !isReport(np) || !ours.plainLoops) return null;
  const seconds = ours.plainLoops[stage];
  return { seconds, ratio: seconds / np.stages[stage], ours, np };
}

/**
 * The TypeScript backend's iterations on its plain loops (WebAssembly kernels off), against the
 * same target: what the backend reaches where WebAssembly SIMD is not available.
 */
function plainLoopRows(record: RunRecord, threshold: number): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const stage of ['apcIteration', 'dhbmIteration'] as const) {
    for (const m of [10, 50]) {
      const p = findProblem(record, `gaussian-n2000-m${m}`);
      const plain = plainLoopTime(p, stage);
      if (!p || plain === null) continue;
      const { seconds, ratio, ours, np } = plain;
      const gflops = ((4 * p.spec.n * p.spec.n) / seconds / 1e9).toFixed(1);
      rows.push({
        target: `one ${stage === 'apcIteration' ? 'APC' : 'D-HBM'} iteration, n = 2000, m = ${m}`,
        backend: 'typescript, plain loops (LINALG_WASM=off)',
        measured: `${ratio.toFixed(3)} (${formatSeconds(seconds)} vs ${formatSeconds(np.stages[stage])})`,
        threshold: `≤ ${threshold}`,
        met: ratio <= threshold,
        limits:
          ratio <= threshold
            ? ''
            : `V8's scalar code, a bounds check per load: ${gflops} GFlop/s on ${ours.environment[stage === 'apcIteration' ? 'apcThreads' : 'dhbmThreads'] ?? 1} thread(s); the WebAssembly SIMD kernels (the default) take ${formatSeconds(ours.stages[stage])}`,
      });
    }
  }
  return rows;
}

function targets(record: RunRecord): TargetRow[] {
  const rows: TargetRow[] = [];
  const thresholds: Record<string, { iteration: number; analysis: number }> = {
    native: { iteration: 1, analysis: 1 },
    typescript: { iteration: 2, analysis: 10 },
  };
  for (const backend of ['native', 'typescript'] as const) {
    const available = record.backends.includes(backend);
    const t = thresholds[backend];
    for (const stage of ['apcIteration', 'dhbmIteration'] as const) {
      for (const m of [10, 50]) {
        const p = findProblem(record, `gaussian-n2000-m${m}`);
        const label = `one ${stage === 'apcIteration' ? 'APC' : 'D-HBM'} iteration, n = 2000, m = ${m}`;
        if (!available || !p || !isReport(p.sides[backend]) || !isReport(p.sides.numpy)) {
          rows.push({
            target: label,
            backend,
            measured: available ? 'not measured in this run' : 'backend not available',
            threshold: `≤ ${t.iteration}`,
            met: null,
            limits: '',
          });
          continue;
        }
        const ratio = p.sides[backend].stages[stage] / p.sides.numpy.stages[stage];
        rows.push({
          target: label,
          backend,
          measured: `${ratio.toFixed(3)} (${formatSeconds(p.sides[backend].stages[stage])} vs ${formatSeconds(p.sides.numpy.stages[stage])})`,
          threshold: `≤ ${t.iteration}`,
          met: ratio <= t.iteration,
          limits: ratio <= t.iteration ? '' : iterationLimit(p, backend, stage),
        });
      }
    }
    if (backend === 'typescript') rows.push(...plainLoopRows(record, t.iteration));
    const p = findProblem(record, 'gaussian-n1000-m10');
    if (!available || !p || !isReport(p.sides[backend]) || !isReport(p.sides.numpy)) {
      rows.push({
        target: 'full analysis, n = 1000, m = 10',
        backend,
        measured: available ? 'not measured in this run' : 'backend not available',
        threshold: `≤ ${t.analysis}`,
        met: null,
        limits: '',
      });
    } else {
      const ours = p.sides[backend];
      const np = p.sides.numpy;
      const ratio = ours.stages.analysis / np.stages.analysis;
      const phases = (Object.keys(ours.analysisPhases) as (keyof AnalysisPhases)[])
        .map((k) => `${k} ${formatSeconds(ours.analysisPhases[k])} vs ${formatSeconds(np.analysisPhases[k])}`)
        .join(', ');
      rows.push({
        target: 'full analysis, n = 1000, m = 10',
        backend,
        measured: `${ratio.toFixed(3)} (${formatSeconds(ours.stages.analysis)} vs ${formatSeconds(np.stages.analysis)})`,
        threshold: `≤ ${t.analysis}`,
        met: ratio <= t.analysis,
        limits: ratio <= t.analysis ? '' : `phases (ours vs NumPy): ${phases}`,
      });
    }
  }
  // Memory: what the analysis holds beyond A and the machines' data, where n x n dominates the runtime's own memory (n >= 2000).
  for (const backend of record.backends) {
    const sherman = findProblem(record, 'sherman5-m10');
    const large = record.problems.filter((q) => q.spec.n >= 2000 && isReport(q.sides[backend]));
    const units = (q: ProblemResult, side: string): number =>
      (q.sides[side] as SideReport).analysisGrowthBytes / (q.spec.n * q.spec.n * FLOAT64_BYTES);
    const worst = large.reduce<ProblemResult | null>((w, q) => (w === null || units(q, backend) > units(w, backend) ? q : w), null);
    const completed = sherman ? isReport(sherman.sides[backend]) : null;
    const npUnits = worst && isReport(worst.sides.numpy) ? ` (NumPy ${units(worst, 'numpy').toFixed(1)})` : '';
    rows.push({
      target: 'memory: the analysis holds a few n x n matrices; completes at n = 3312',
      backend,
      measured:
        `${completed === null ? 'sherman5 not in this run' : completed ? `sherman5 (n = 3312) completed, peak RSS ${formatBytes((sherman!.sides[backend] as SideReport).peakRssBytes)}` : 'sherman5 FAILED'}` +
        (worst
          ? `; the analysis holds at most ${units(worst, backend).toFixed(1)} n x n beyond its inputs${npUnits}, at ${worst.spec.name}`
          : ''),
      threshold: `≤ ${MEMORY_TARGET_NXN} n x n beyond A, A_i, Q_i; n = 3312 completes`,
      met: completed === null || worst === null ? null : completed && units(worst, backend) <= MEMORY_TARGET_NXN,
      limits: '',
    });
  }
  // End to end.
  const load = record.e2e ? headlineLoad(record.e2e.loads) : null;
  if (!record.e2e)
    rows.push({
      target: 'end to end: ≥ 200 jobs/s, p99 < 250 ms',
      backend: 'service',
      measured: 'not run (--no-e2e)',
      threshold: '',
      met: null,
      limits: '',
    });
  else if (!load || !load.latencyMs)
    rows.push({
      target: 'end to end: ≥ 200 jobs/s, p99 < 250 ms',
      backend: 'service',
      measured: `failed: ${record.e2e.error ?? 'no job succeeded'}`,
      threshold: '≥ 200 /s, p99 < 250 ms',
      met: false,
      limits: '',
    });
  else {
    const met = meetsE2e(load);
    rows.push({
      target: 'end to end: ≥ 200 jobs/s, p99 < 250 ms',
      backend: `service (${record.e2e.config.WORKER_CONCURRENCY} worker children)`,
      measured: `${load.throughput.toFixed(0)} jobs/s, p50 ${load.latencyMs.p50.toFixed(0)} ms, p99 ${load.latencyMs.p99.toFixed(0)} ms (${load.succeeded} jobs, ${load.concurrency} concurrent clients${record.e2e.loads.length > 1 ? `; best of ${record.e2e.loads.length} levels, see End to end` : ''})`,
      threshold: '≥ 200 /s, p99 < 250 ms',
      met,
      limits: met ? '' : e2eLimit(load, record.machine.cores, record.e2e.otherLoadCores),
    });
  }
  // Agreement.
  for (const [a, b] of agreementPairs(record)) {
    const w = worstAgreement(record, a, b);
    const f = worstToleranceFraction(record, a, b);
    rows.push({
      target: `agreement: analysis values (${AGREEMENT_KEYS.map(([k]) => k).join(', ')}) on every problem, ${a} vs ${b}`,
      backend: a,
      measured:
        w && f
          ? `largest relative difference ${exp2(w.worst)} (${w.key}, ${w.problem}); largest difference as a fraction of its tolerance ${exp2(f.fraction)} (${f.key}, ${f.problem})`
          : 'no comparable results',
      threshold: "within the fixture tests' tolerances (see Agreement)",
      met: f ? f.fraction <= 1 : null,
      limits: '',
    });
  }
  for (const backend of record.backends) {
    const f = record.fixtures[backend];
    rows.push({
      target: 'agreement with the NumPy fixtures',
      backend,
      measured: fixtureSummary(f),
      threshold: 'all cases within the test tolerances',
      met: f && !('error' in f) ? f.cases.every((c) => c.passed) : f ? false : null,
      limits: '',
    });
  }
  return rows;
}

/** What bounds the service's throughput at a level, from the CPU it and the load generator used. */
function e2eLimit(l: MeasuredLoad, cores: number, otherCores: number | null): string {
  const used = (l.serviceCores ?? 0) + l.loadCores + (otherCores ?? 0);
  const cpu =
    `the service's processes used ${l.serviceCores?.toFixed(2) ?? '?'} cores and the load generator ${l.loadCores.toFixed(2)} of the machine's ${cores}` +
    (otherCores !== null && otherCores > 0.05 ? `, other processes ${otherCores.toFixed(2)}` : '');
  return used >= 0.8 * cores
    ? `CPU: ${cpu}, so the cores are saturated; per job the cost is ${((1e3 * (l.serviceCores ?? 0)) / l.throughput).toFixed(1)} ms of service CPU (HTTP, validation, Redis/BullMQ round trips, the sandboxed worker's run, SSE)`
    : `not CPU (${cpu}): waiting (Redis/BullMQ hand-offs, WORKER_CONCURRENCY) bounds it; in a closed loop latency ≈ clients / throughput`;
}

function metText(met: boolean | null): string {
  return met === null ? 'n/a' : met ? 'met' : 'MISSED';
}

function renderMarkdown(record: RunRecord, summary: string[]): string {
  const { machine, policy: p } = record;
  const e2eResult = record.e2e;
  const out: string[] = [];
  out.push('# Benchmark results', '');
  out.push('Generated by `bench/run.ts`; do not edit by hand. The numbers below are from one run on the machine described.', '');
  out.push('## Summary', '', ...summary, '');
  out.push('## Run', '');
  out.push(`- Date: ${record.date}`);
  out.push(`- Command: \`${record.command}\` (total ${(record.totalSeconds / 60).toFixed(1)} min)`);
  out.push(`- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.ramGiB.toFixed(0)} GiB RAM (${machine.caches}); ${machine.os}`);
  out.push(`- Software: Node ${machine.node}; Python ${machine.python}, NumPy ${machine.numpy}, ${machine.blas}`);
  out.push(
    `- Load average (1, 5, 15 min) before: ${machine.loadBefore.map((x) => x.toFixed(2)).join(', ')}; after: ${machine.loadAfter.map((x) => x.toFixed(2)).join(', ')}.`,
  );
  const loads = record.problems.map(
    (q) =>
      `${q.spec.name} ${q.otherLoadCores === null ? '?' : q.otherLoadCores.toFixed(2)}${q.attempts > 1 ? ` (quietest of ${q.attempts} runs)` : ''}`,
  );
  if (record.e2e) loads.push(`end to end ${record.e2e.otherLoadCores === null ? '?' : record.e2e.otherLoadCores.toFixed(2)}`);
  out.push(
    `- Other processes' CPU use while each part ran (cores of ${machine.cores}; from /proc/stat minus this benchmark's processes): ${loads.join(', ')}. Anything well above 0 inflates the times of that part, NumPy's most (its OpenBLAS splits work over both cores and waits for the slower).`,
  );
  out.push(`- Backends measured: ${record.backends.join(', ')}${record.backendNotes.length ? `. ${record.backendNotes.join(' ')}` : ''}`);
  out.push(
    `- Policy (same on both sides): one warm-up of setup + analysis on a 64 x 64 Gaussian system; setup and analysis best of 3 runs for n ≤ 500, 1 run above` +
      `${p.repeatScale !== 1 ? ` (scaled by ${p.repeatScale})` : ''}; single iterations: untimed steps for 0.25 s (at least 5; V8 needs a few hundred steps of a small problem to run optimized code), then best of 50 (n ≤ 500) or 30 (larger); ` +
      `full solves from the standard start (construction included) to |Ax - b|/|b| ≤ ${p.tolerance}, capped at ${p.maxSolveIterations} iterations and ${p.solveBudgetSeconds} s of wall clock each. ` +
      `Shared machine: before each problem and the load test the run waits up to ${record.quiet.waitSeconds} s for other processes to leave the cores idle, and repeats a problem during which they used more than ${NOISY_CORES} core (${record.quiet.retries} time(s) at most, keeping the quietest run).`,
  );
  out.push(
    '- Ours: each problem in a fresh `node --import tsx bench/stages.ts` process per backend, through the library API (no HTTP). NumPy: `python3 bench/reference.py` in its own process, reading the same bytes. Peak RSS: `process.resourceUsage().maxRSS` / `ru_maxrss`.',
  );
  out.push('');
  out.push('## Targets', '');
  out.push(
    md([
      ['target', 'backend', 'measured (ratio = ours / NumPy)', 'target', 'result', 'what limits it'],
      ...targets(record).map((t) => [t.target, t.backend, t.measured, t.threshold, metText(t.met), t.limits]),
    ]),
  );
  out.push('');
  out.push('## Stages', '');
  out.push('Wall time per stage; ratio = ours / NumPy (below 1: ours is faster).', '');
  for (const stage of ['setup', 'analysis', 'apcIteration', 'dhbmIteration'] as const) {
    out.push(`### ${STAGE_LABELS[stage]}`, '', stageTable(record, stage), '');
  }
  out.push('### Analysis by phase', '', phaseTable(record), '');
  out.push('### Full solves', '');
  out.push(
    'Gaussian mean-1 matrices are badly conditioned (kappa(A^T A) ~ 1e7..1e10 here), so a solve to 1e-8 takes 1e4..1e6 iterations: most runs stop on the wall-clock budget, and the comparable number is the time per iteration (the runs include construction and, on our side, the runner: trace, divergence checks, final residual). ' +
      'The last column compares the sustained rate with the best single iteration: well above 1 means the long run was slowed, by per-iteration overhead or by other load on the machine (OpenBLAS splitting a gemv over both cores waits for the slower one when a core is busy).',
    '',
  );
  out.push('#### APC', '', solveTable(record, 'apcSolve'), '', '#### D-HBM', '', solveTable(record, 'dhbmSolve'), '');
  out.push('## Memory', '');
  out.push(
    "Peak RSS of each problem's process (the analysis is its largest stage), and the growth over the process's baseline (runtime + libraries, before the matrix is read) in units of one n x n float64 matrix; A itself counts as 1.",
    '',
  );
  out.push(memoryTable(record), '');
  out.push('## Roofline', '');
  out.push(
    'One stream pass = the fastest read of every entry of A measured in this run for that problem: ours is a single-threaded reduction with eight accumulators, NumPy\'s `A.sum()` (one thread) and `A @ ones` (OpenBLAS gemv, all threads). "passes" = iteration time / that time. ' +
      "Minimum passes per iteration: our APC reads each Q_i^T twice (2 passes; its residual comes from R^T w_i, no pass over A), our D-HBM reads A once (fused A^T (A x - b)); NumPy's APC reads each Q_i twice and A once for the residual (3), its D-HBM reads A twice (2). " +
      "The machine's caches are large (see Run): up to n = 2000 (31 MiB) A may be served from cache rather than DRAM. " +
      `Our single-threaded pass is the best over our processes: its speed varies between processes (up to ~3x at n = 2000, with where the pages land); NumPy also asks for transparent huge pages for large arrays (madvise; this kernel's THP setting: ${record.machine.thp}), V8's ArrayBuffers do not.`,
    '',
  );
  out.push(rooflineTable(record), '');
  out.push('## Agreement', '');
  out.push(
    "Relative differences of the analysis values. NumPy's eigvalsh of the formed S knows lambda_min(S) only to ~eps·kappa(S) relative, its SVD sigma_min to ~eps·kappa(A) (kappa(A^T A) to twice that); ours works with A and Q unsquared. Differences of that size are the reference's rounding, not disagreement. " +
      "The targets count a value as agreeing within the tolerances of test/solvers/analysis/fixtures.test.ts, with the second side of each pair as the reference: kappa(S) relative max(1e-6, 4 eps kappa(S)), kappa(A^T A) relative max(1e-6, 8 eps sqrt(kappa(A^T A))), angles 1e-9 absolute, rates 1e-9 absolute (or the condition number's tolerance times the rate's sensitivity), the row-norm ratio 1e-9 relative.",
    '',
  );
  out.push(agreementTable(record), '');
  out.push(
    'Fixtures (../shared/fixtures/heterogeneity, NumPy/SciPy references; tolerances of test/solvers/analysis/fixtures.test.ts):',
    '',
  );
  for (const backend of record.backends) out.push(`- ${backend}: ${fixtureSummary(record.fixtures[backend])}`);
  out.push('');
  out.push('## End to end (HTTP, BullMQ, Redis, worker)', '');
  if (!e2eResult) out.push('Not run (--no-e2e).');
  else {
    out.push(
      `- Service: ${Object.entries(e2eResult.config)
        .map(([k, v]) => `${k} = ${v}`)
        .join(', ')}; ready after ${e2eResult.serviceStartSeconds.toFixed(1)} s.`,
    );
    if (e2eResult.error) out.push(`- Failed: ${e2eResult.error}`);
    const first = e2eResult.loads[0];
    if (first) {
      out.push(
        `- Load: \`bench/load.ts\` in a second process on loopback, once per concurrency level against the same service; each level: ${first.warmupJobs} warm-up jobs (not counted), then a closed loop of that many clients, each submitting an analyze job (gaussian n = ${first.n}, mean 1, distinct seeds; partition { machines: ${first.m} }) and following it on its SSE stream (GET /v1/jobs/{id}/events, no polling) to the final status; bounded by ${first.jobLimit} jobs and ${first.secondsLimit} s per level. Latency = POST sent to final status event received. In a closed loop latency ≈ clients / throughput, so the levels trace the throughput-latency curve.`,
      );
      out.push('');
      out.push(
        md([
          [
            'clients',
            'stopped by',
            'submitted',
            'succeeded',
            'failed',
            'rejected',
            'unfinished',
            'window',
            'throughput',
            'p50',
            'p90',
            'p99',
            'max',
            'POST p50 / p99',
            'CPU: service / load generator (cores)',
          ],
          ...e2eResult.loads.map((l) => [
            String(l.concurrency),
            l.stoppedBy,
            String(l.submitted),
            String(l.succeeded),
            String(l.failed),
            Object.entries(l.rejected)
              .map(([k, v]) => `${k}: ${v}`)
              .join(', ') || '0',
            String(l.unfinished),
            `${l.windowSeconds.toFixed(1)} s`,
            `${l.throughput.toFixed(1)} jobs/s`,
            ...(l.latencyMs
              ? [l.latencyMs.p50, l.latencyMs.p90, l.latencyMs.p99, l.latencyMs.max].map((x) => `${x.toFixed(0)} ms`)
              : ['—', '—', '—', '—']),
            l.submitMs ? `${l.submitMs.p50.toFixed(1)} / ${l.submitMs.p99.toFixed(1)} ms` : '—',
            `${l.serviceCores === null ? '?' : l.serviceCores.toFixed(2)} / ${l.loadCores.toFixed(2)}`,
          ]),
        ]),
      );
    }
  }
  out.push('');
  out.push('## Notes', '');
  out.push(
    "- What NumPy computes (bench/reference.py): QR of each A_i^T (numpy.linalg.qr), cos theta_ij = sigma_max(Q_a^T Q_b) with the sine route when that cosine exceeds 0.9 (SPEC), |u_k·u_l| for all row pairs as one GEMM, eigvalsh of the formed S = Q Q^T, SVD of A; APC as Q_i (Q_i^T v) with the residual |A xbar - b| each iteration; D-HBM as A^T (A x - b) with two gemv. A competent by-hand implementation, dense throughout (also for the sparse sherman5: ours works on each machine's column support there).",
    '- Ratios below 1 mean ours is faster. Single iterations are best-of-k; the expensive stages at n ≥ 1000 are single runs. Between runs on a quiet machine a ratio moves by up to ~10-20 %, and the TypeScript iterations that run on two worker threads by up to 2-3x (their best step depends on how the threads are scheduled), so a ratio within ~10 % of its target is a tie rather than a clear pass or miss.',
  );
  for (const note of record.backendNotes) out.push(`- ${note}`);
  out.push('');
  return out.join('\n');
}

function summaryLines(record: RunRecord, rows: TargetRow[]): string[] {
  const lines: string[] = [];
  const ratioOf = (name: string, side: string, stage: StageName): string => {
    const p = findProblem(record, name);
    if (!p || !isReport(p.sides[side]) || !isReport(p.sides.numpy)) return '—';
    return formatRatio(p.sides[side].stages[stage] / p.sides.numpy.stages[stage]);
  };
  lines.push(
    `Measured by \`${record.command}\` (${record.date.slice(0, 10)}, ${record.machine.cpu}, ${record.machine.cores} cores) against NumPy ${record.machine.numpy} with ${record.machine.blas} in the same run; ratio = our time / NumPy's, below 1 is faster.`,
  );
  for (const backend of record.backends) {
    lines.push(
      `- ${backend === 'native' ? 'Native (OpenBLAS) backend' : 'TypeScript backend (no native code; row kernels in WebAssembly SIMD)'}: one APC iteration at n = 2000 ${ratioOf('gaussian-n2000-m10', backend, 'apcIteration')} (m = 10) / ${ratioOf('gaussian-n2000-m50', backend, 'apcIteration')} (m = 50), ` +
        `one D-HBM iteration ${ratioOf('gaussian-n2000-m10', backend, 'dhbmIteration')} / ${ratioOf('gaussian-n2000-m50', backend, 'dhbmIteration')}, ` +
        `the full analysis at n = 1000, m = 10 ${ratioOf('gaussian-n1000-m10', backend, 'analysis')}; on sherman5 (n = 3312, sparse) ${ratioOf('sherman5-m10', backend, 'apcIteration')} per APC iteration and ${ratioOf('sherman5-m10', backend, 'analysis')} for the analysis.`,
    );
  }
  const plain = (name: string, stage: 'apcIteration' | 'dhbmIteration'): string => {
    const time = plainLoopTime(findProblem(record, name), stage);
    return time === null ? '—' : formatRatio(time.ratio);
  };
  if (record.backends.includes('typescript')) {
    lines.push(
      `- The TypeScript backend on its plain loops (LINALG_WASM=off, or no WebAssembly SIMD): one APC iteration at n = 2000 ${plain('gaussian-n2000-m10', 'apcIteration')} / ${plain('gaussian-n2000-m50', 'apcIteration')}, one D-HBM iteration ${plain('gaussian-n2000-m10', 'dhbmIteration')} / ${plain('gaussian-n2000-m50', 'dhbmIteration')}.`,
    );
  }
  if (!record.backends.includes('native'))
    lines.push(`- Native backend: not measured (${record.backendNotes.join(' ') || 'not available'}).`);
  const memory = rows.filter((r) => r.target.startsWith('memory')).map((r) => `${r.backend}: ${r.measured}`);
  if (memory.length) lines.push(`- Memory: ${memory.join('; ')}.`);
  const e2eRow = rows.find((r) => r.target.startsWith('end to end'));
  if (e2eRow)
    lines.push(`- End to end (analyze jobs n = 50, m = 5 through HTTP, BullMQ, Redis and the worker, SSE, loopback): ${e2eRow.measured}.`);
  const agreement = rows.filter((r) => r.target.startsWith('agreement'));
  if (agreement.length) {
    lines.push(
      `- Agreement: ${agreement.every((r) => r.met === true) ? 'every analysis value agrees across backends and with NumPy within the fixture tolerances, and both backends reproduce all fixtures' : 'see Targets: some values disagree'}.`,
    );
  }
  const met = rows.filter((r) => r.met === true).length;
  const missed = rows.filter((r) => r.met === false);
  lines.push(
    `- Targets: ${met} met, ${missed.length} missed${missed.length ? ` (${missed.map((r) => `${r.target} [${r.backend}]`).join('; ')})` : ''}; what limits each is in the Targets table.`,
  );
  return lines.slice(0, 13);
}

// ---------------------------------------------------------------------------------------------

function writeReport(record: RunRecord): TargetRow[] {
  const rows = targets(record);
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, renderMarkdown(record, summaryLines(record, rows)));
  return rows;
}

async function main(): Promise<void> {
  if (args.render) {
    // Re-render a report from the raw results of an earlier run (same numbers, same command).
    writeReport(JSON.parse(readFileSync(args.render, 'utf8')) as RunRecord);
    log(`written: ${relative(ROOT, outFile)} from ${args.render}`);
    return;
  }
  const started = performance.now();
  mkdirSync(CACHE, { recursive: true });
  const support = backendSupport();
  const requested = args.backends ? (args.backends.split(',').map((b) => b.trim()) as BackendName[]) : support.available;
  const backends = requested.filter((b) => support.available.includes(b));
  for (const b of requested) if (!backends.includes(b)) support.notes.push(`Backend ${b} was requested but is not available.`);

  const loadBefore = os.loadavg();
  const pythonInfo = await runChild('python3', [
    '-c',
    'import json, platform, numpy as np; b = np.show_config(mode="dicts")["Build Dependencies"]["blas"]; print(json.dumps({"python": platform.python_version(), "numpy": np.__version__, "blas": b["name"] + " " + b["version"]}))',
  ]);
  const py = lastJson<{ python: string; numpy: string; blas: string }>(pythonInfo, 'python3');
  const npmEvent = process.env.npm_lifecycle_event;
  const argv = process.argv.slice(2).join(' ');
  const command = npmEvent
    ? `npm run ${npmEvent}${argv && !(process.env.npm_lifecycle_script ?? '').endsWith(argv) ? ` -- ${argv}` : ''}`
    : `node --import tsx bench/run.ts${argv ? ` ${argv}` : ''}`;
  const machine: Machine = {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    ramGiB: os.totalmem() / 2 ** 30,
    caches: await cacheSizes(),
    os: osName(),
    node: process.version,
    python: 'error' in py ? 'unavailable' : py.python,
    numpy: 'error' in py ? 'unavailable' : py.numpy,
    blas: 'error' in py ? 'unavailable' : py.blas,
    thp: transparentHugePages(),
    loadBefore,
    loadAfter: [],
  };
  log(
    `benchmark: ${problems.length} problems, backends ${backends.join(', ')}, solve budget ${policy.solveBudgetSeconds} s, cap ${policy.maxSolveIterations} iterations`,
  );
  for (const note of support.notes) log(`  note: ${note}`);
  log(
    `  load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')}; cache ${relative(ROOT, CACHE)}; waits up to ${quiet.waitSeconds} s for quiet before each part, repeats a disturbed problem ${quiet.retries} time(s)`,
  );

  const results: ProblemResult[] = [];
  for (const problem of problems) {
    const result = await runProblemQuietly(problem, backends);
    results.push(result);
    printProblem(result, backends);
  }

  const fixtures: Record<string, FixtureReport | { error: string }> = {};
  if (!args['no-fixtures']) {
    for (const backend of backends) {
      const result = await runChild(
        process.execPath,
        [...NODE_TSX, join(BENCH, 'fixtures.ts'), backend, join(SHARED, 'fixtures', 'heterogeneity'), MATRICES],
        { timeoutMs: CHILD_TIMEOUT_MS },
      );
      fixtures[backend] = lastJson<FixtureReport>(result, `fixtures.ts ${backend}`);
      log(`\nfixtures (${backend}): ${fixtureSummary(fixtures[backend])}`);
    }
  }

  if (e2e.enabled) await waitForQuiet(quiet.waitSeconds);
  const e2eResult = e2e.enabled ? await runEndToEnd() : null;
  if (e2eResult?.error) log(`  end to end failed: ${e2eResult.error}`);

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
    totalSeconds: (performance.now() - started) / 1e3,
  };
  writeFileSync(join(CACHE, quick ? 'results-quick.json' : 'results.json'), `${JSON.stringify(record, null, 2)}\n`);
  const rows = writeReport(record);
  log('\ntargets');
  for (const t of rows) {
    log(`  ${metText(t.met).padEnd(7)} ${t.target} [${t.backend}]: ${t.measured}`);
    if (t.limits) log(`          limited by ${t.limits}`);
  }
  log(`\nwritten: ${relative(ROOT, outFile)} (${(record.totalSeconds / 60).toFixed(1)} min)`);
}

await main();
