/**
 * A full APC solve through the HTTP API, as a user would run it, in a process of its own: start the
 * service (bench/service.ts), upload a 2-D Poisson matrix (POST /v1/matrices, Matrix Market text
 * streamed), submit a solve job naming it (m contiguous strips, APC, tolerance 1e-8), follow it to
 * its end, then fetch the trace and the solution. Each step's wall time is reported; the job's own
 * analysis and run times come from its document.
 *
 *   node --import tsx bench/httpSolve.ts [--n 1000000] [--m 100] [--max-iterations 100000] [--timeout-seconds 3600]
 * Prints one HttpSolveReport JSON on stdout.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { writeMatrixMarket } from './matrixMarketFile.js';
import { CACHE, log } from './processes.js';
import { runJobOverHttp, startService, uploadMatrixMarket } from './service.js';

export interface HttpSolveReport {
  n: number;
  m: number;
  nnz: number;
  uploadBytes: number;
  /** Seconds of each step, as the client saw them. */
  seconds: { upload: number; job: number; trace: number; solution: number; total: number };
  status: string;
  iterations: number | null;
  relativeResidual: number | null;
  /** The job's run (runner's wallTimeMs, seconds). */
  runSeconds: number | null;
  storage: string | null;
  backend: string | null;
  tracePoints: number | null;
  solutionLength: number | null;
  /** Largest resident set of the service's process tree sampled while the job ran (bytes). */
  peakServiceRssBytes: number | null;
  error: string | null;
}

interface JobDocument {
  status: string;
  storage?: string;
  backend?: string | null;
  error?: { detail?: string };
  result?: { runs: Record<string, { iterations: number; wallTimeMs: number; relativeResidual: number }> };
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      n: { type: 'string', default: '1000000' },
      m: { type: 'string', default: '100' },
      'max-iterations': { type: 'string', default: '100000' },
      'timeout-seconds': { type: 'string', default: '3600' },
    },
  });
  const n = Number(args.n);
  const m = Number(args.m);
  const k = Math.round(Math.sqrt(n));
  const A = poisson2d(k);
  const file = join(CACHE, `httpsolve-poisson-n${n}.mtx`);
  writeMatrixMarket(A, file);
  const report: HttpSolveReport = {
    n,
    m,
    nnz: A.rowPtr[n],
    uploadBytes: statSync(file).size,
    seconds: { upload: NaN, job: NaN, trace: NaN, solution: NaN, total: NaN },
    status: 'not started',
    iterations: null,
    relativeResidual: null,
    runSeconds: null,
    storage: null,
    backend: null,
    tracePoints: null,
    solutionLength: null,
    peakServiceRssBytes: null,
    error: null,
  };
  const service = await startService(
    { LOG_LEVEL: 'warn', JOB_TIMEOUT_MS: String(Number(args['timeout-seconds']) * 1000) },
    'service-httpsolve.log',
  );
  const t0 = performance.now();
  let mark = t0;
  const lap = (): number => {
    const now = performance.now();
    const s = (now - mark) / 1e3;
    mark = now;
    return s;
  };
  try {
    const matrixId = await uploadMatrixMarket(service.baseUrl, file);
    report.seconds.upload = lap();
    log(`  http solve: uploaded n = ${n} (${(report.uploadBytes / 2 ** 20).toFixed(0)} MiB) in ${report.seconds.upload.toFixed(1)} s`);
    const {
      id: jobId,
      job,
      peakRssBytes: peak,
    } = await runJobOverHttp<JobDocument>(service, {
      type: 'solve',
      matrix: { format: 'stored', id: matrixId },
      partition: { machines: m },
      algorithms: ['apc'],
      options: { tolerance: 1e-8, maxIterations: Number(args['max-iterations']) },
    });
    report.seconds.job = lap();
    report.peakServiceRssBytes = peak || null;
    report.status = job.status;
    report.storage = job.storage ?? null;
    report.backend = job.backend ?? null;
    if (job.status !== 'succeeded' || !job.result) throw new Error(`job ${job.status}: ${job.error?.detail ?? ''}`);
    const run = job.result.runs.apc;
    report.iterations = run.iterations;
    report.relativeResidual = run.relativeResidual;
    report.runSeconds = run.wallTimeMs / 1e3;
    const trace = (await (await fetch(`${service.baseUrl}/v1/jobs/${jobId}/runs/apc/trace`)).json()) as { iteration: number[] };
    report.tracePoints = trace.iteration.length;
    report.seconds.trace = lap();
    const solution = (await (await fetch(`${service.baseUrl}/v1/jobs/${jobId}/runs/apc/solution`)).json()) as { x: number[] };
    report.solutionLength = solution.x.length;
    report.seconds.solution = lap();
  } catch (error) {
    report.error = (error as Error).message;
  } finally {
    report.seconds.total = (performance.now() - t0) / 1e3;
    await service.stop();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
