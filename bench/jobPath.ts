/**
 * The job path's cost per iteration against the library's, in one process of its own: the same
 * solve run (same matrix, partition, algorithm, iteration count, trace cap) first through the
 * library's runner in this process (runAlgorithm after analyze, as computeJob does), then as a job
 * of the service (bench/service.ts: HTTP, BullMQ, Redis, the worker's sandboxed child), each timed
 * by the runner's own wallTimeMs (method creation, its threads' start, every iteration with its
 * trace record). Dense: a Gaussian generator job; CSR: a 2-D Poisson matrix uploaded to
 * POST /v1/matrices and named by a stored-matrix job.
 *
 *   node --import tsx bench/jobPath.ts <typescript|native> [--dense-n 2000] [--dense-m 10]
 *     [--dense-iterations 3000] [--csr-k 200] [--csr-m 20] [--csr-iterations 1000]
 *     [--algorithms dhbm,apc] [--worker-concurrency N]
 * Prints one JobPathReport JSON on stdout.
 */
import { createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import {
  analyze,
  buildDistributedSystem,
  createProblem,
  DEFAULT_TRACE_CAP,
  generateMatrix,
  runAlgorithm,
  spectralDataOf,
  type AlgorithmId,
  type CsrMatrix,
  type DenseMatrix,
} from '../src/solvers/index.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend, type BackendName } from './backends.js';
import { writeMatrixMarket } from './matrixMarketFile.js';
import { CACHE, log } from './processes.js';
import { startService, type RunningService } from './service.js';

export interface JobPathCase {
  storage: 'dense' | 'csr';
  /** e.g. gaussian-n2000-m10, poisson-n250000-m100. */
  problem: string;
  algorithm: AlgorithmId;
  iterations: number;
  /** The runner's wallTimeMs / iterations, in this process (library) and through a job. */
  libraryMsPerIteration: number;
  jobMsPerIteration: number;
  /** job / library. */
  ratio: number;
  libraryThreads: number;
}

export interface JobPathReport {
  backend: BackendName;
  /** The service's settings that bear on the job path. */
  service: { WORKER_CONCURRENCY: number; cores: number; TRACE_CAP: number };
  cases: JobPathCase[];
  error: string | null;
}

interface JobDocument {
  status: string;
  error?: { detail?: string };
  result?: { runs: Record<string, { iterations: number; wallTimeMs: number }> };
}

/** Submits a solve job and waits for its end; returns each run's wallTimeMs and iterations. */
async function solveJob(
  service: RunningService,
  matrix: unknown,
  m: number,
  algorithms: AlgorithmId[],
  iterations: number,
): Promise<Record<string, { iterations: number; wallTimeMs: number }>> {
  const response = await fetch(`${service.baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // A tolerance no run reaches: every run makes exactly `iterations` steps.
    body: JSON.stringify({
      type: 'solve',
      matrix,
      partition: { machines: m },
      algorithms,
      options: { tolerance: 1e-300, maxIterations: iterations },
    }),
  });
  if (response.status !== 202) throw new Error(`POST /v1/jobs: ${response.status} ${await response.text()}`);
  const { id } = (await response.json()) as { id: string };
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const job = (await (await fetch(`${service.baseUrl}/v1/jobs/${id}`)).json()) as JobDocument;
    if (job.status === 'succeeded' && job.result) return job.result.runs;
    if (job.status === 'failed' || job.status === 'cancelled') throw new Error(`job ${id} ${job.status}: ${job.error?.detail ?? ''}`);
  }
}

/** Uploads the Matrix Market file (streamed) and returns the stored matrix's id. */
async function upload(service: RunningService, file: string): Promise<string> {
  const response = await fetch(`${service.baseUrl}/v1/matrices`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>,
    duplex: 'half',
  });
  if (response.status !== 201) throw new Error(`POST /v1/matrices: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** The library's runner on the same problem: per algorithm, wallTimeMs / iterations and its threads. */
function libraryRuns(
  A: DenseMatrix | CsrMatrix,
  m: number,
  algorithms: AlgorithmId[],
  iterations: number,
): Record<string, { msPerIteration: number; threads: number }> {
  const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
  const spectral = spectralDataOf(analyze(system));
  const out: Record<string, { msPerIteration: number; threads: number }> = {};
  for (const id of algorithms) {
    const run = runAlgorithm(system, id, spectral, { tolerance: 1e-300, maxIterations: iterations, traceCap: DEFAULT_TRACE_CAP });
    out[id] = { msPerIteration: run.wallTimeMs / run.iterations, threads: run.threads ?? 1 };
  }
  return out;
}

async function main(): Promise<void> {
  const { values: args, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'dense-n': { type: 'string', default: '2000' },
      'dense-m': { type: 'string', default: '10' },
      'dense-iterations': { type: 'string', default: '3000' },
      'csr-k': { type: 'string', default: '200' },
      'csr-m': { type: 'string', default: '20' },
      'csr-iterations': { type: 'string', default: '1000' },
      algorithms: { type: 'string', default: 'dhbm,apc' },
      'worker-concurrency': { type: 'string' },
    },
  });
  const backend = positionals[0] as BackendName;
  if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: jobPath.ts <typescript|native> [options]');
  selectBackend(backend);
  const algorithms = args.algorithms.split(',') as AlgorithmId[];
  const denseN = Number(args['dense-n']);
  const denseM = Number(args['dense-m']);
  const denseIterations = Number(args['dense-iterations']);
  const k = Number(args['csr-k']);
  const csrM = Number(args['csr-m']);
  const csrIterations = Number(args['csr-iterations']);
  const seed = 2024 + denseN + denseM;
  const denseSpec = { format: 'generator', generator: 'gaussian', n: denseN, mean: 1, std: 1, seed } as const;
  const cases: JobPathCase[] = [];
  const workerConcurrency = args['worker-concurrency'];
  const report: JobPathReport = {
    backend,
    service: { WORKER_CONCURRENCY: Number(workerConcurrency ?? 2), cores: availableParallelism(), TRACE_CAP: DEFAULT_TRACE_CAP },
    cases,
    error: null,
  };

  // The library first, while no service runs.
  const denseLibrary = libraryRuns(generateMatrix(denseSpec), denseM, algorithms, denseIterations);
  const poisson = poisson2d(k);
  const mmFile = join(CACHE, `jobpath-poisson-k${k}.mtx`);
  writeMatrixMarket(poisson, mmFile);
  const csrLibrary = libraryRuns(poisson, csrM, algorithms, csrIterations);

  const env: NodeJS.ProcessEnv = { NUMERIC_BACKEND: backend, LOG_LEVEL: 'warn', TRACE_CAP: String(DEFAULT_TRACE_CAP) };
  if (workerConcurrency !== undefined) env.WORKER_CONCURRENCY = workerConcurrency;
  const service = await startService(env, `service-jobpath-${backend}.log`);
  try {
    const add = (
      storage: JobPathCase['storage'],
      problem: string,
      runs: Awaited<ReturnType<typeof solveJob>>,
      library: typeof denseLibrary,
    ): void => {
      for (const algorithm of algorithms) {
        const job = runs[algorithm];
        const jobMsPerIteration = job.wallTimeMs / job.iterations;
        const lib = library[algorithm];
        cases.push({
          storage,
          problem,
          algorithm,
          iterations: job.iterations,
          libraryMsPerIteration: lib.msPerIteration,
          jobMsPerIteration,
          ratio: jobMsPerIteration / lib.msPerIteration,
          libraryThreads: lib.threads,
        });
        log(
          `  ${backend} ${storage} ${problem} ${algorithm}: job ${jobMsPerIteration.toFixed(3)} ms/it, library ${lib.msPerIteration.toFixed(3)} ms/it`,
        );
      }
    };
    add('dense', `gaussian-n${denseN}-m${denseM}`, await solveJob(service, denseSpec, denseM, algorithms, denseIterations), denseLibrary);
    const id = await upload(service, mmFile);
    add(
      'csr',
      `poisson-n${k * k}-m${csrM}`,
      await solveJob(service, { format: 'stored', id }, csrM, algorithms, csrIterations),
      csrLibrary,
    );
  } catch (error) {
    report.error = (error as Error).message;
  } finally {
    await service.stop();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
