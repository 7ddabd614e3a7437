/**
 * The job path's cost per iteration against the library's, in one process of its own: the same
 * solve run (same matrix, partition, algorithm, iteration count, trace cap) through the library's
 * runner in this process (runAlgorithm after analyze, as computeJob does) and as a job of the
 * service (bench/service.ts: HTTP, BullMQ, Redis, the worker's sandboxed child), each timed by the
 * runner's own wallTimeMs (method creation, its threads' start, every iteration with its trace
 * record). Dense: a Gaussian generator job; CSR: a 2-D Poisson matrix uploaded to POST /v1/matrices
 * and named by a stored-matrix job.
 *
 * The two sides are interleaved, `--rounds` times (library run, then job, per round), and each side
 * reports its best and median round: on a shared machine the load changes within a minute, so one
 * library run followed by one job compares two different machines (one such run put the job at
 * 1.7 x, the next at 0.56 x, on the same code). The library's system and analysis are built once
 * (untimed); every job builds and analyses its own.
 *
 *   node --import tsx bench/jobPath.ts <typescript|native> [--dense-n 2000] [--dense-m 10]
 *     [--dense-iterations 3000] [--csr-k 200] [--csr-m 20] [--csr-iterations 1000]
 *     [--algorithms dhbm,apc] [--storages dense,csr] [--rounds 3] [--worker-concurrency N]
 * Prints one JobPathReport JSON on stdout.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
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
import { runJobOverHttp, startService, uploadMatrixMarket, type RunningService } from './service.js';

export interface JobPathCase {
  storage: 'dense' | 'csr';
  /** e.g. gaussian-n2000-m10, poisson-n250000-m100. */
  problem: string;
  algorithm: AlgorithmId;
  iterations: number;
  /** The runner's wallTimeMs / iterations, in this process (library) and through a job: best of the rounds. */
  libraryMsPerIteration: number;
  jobMsPerIteration: number;
  /** job / library, best against best. */
  ratio: number;
  libraryThreads: number;
  /** Interleaved rounds (library run, then job) the best and medians are taken over. */
  rounds: number;
  libraryMedianMsPerIteration: number;
  jobMedianMsPerIteration: number;
  /** job / library, median against median. */
  medianRatio: number;
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
  // A tolerance no run reaches: every run makes exactly `iterations` steps.
  const { id, job } = await runJobOverHttp<JobDocument>(
    service,
    { type: 'solve', matrix, partition: { machines: m }, algorithms, options: { tolerance: 1e-300, maxIterations: iterations } },
    { pollMs: 250, sampleRss: false },
  );
  if (job.status === 'succeeded' && job.result) return job.result.runs;
  throw new Error(`job ${id} ${job.status}: ${job.error?.detail ?? ''}`);
}

/** The library's side: the system and its analysis built once; `run` times one run of an algorithm. */
function librarySide(
  A: DenseMatrix | CsrMatrix,
  m: number,
  iterations: number,
): (id: AlgorithmId) => { msPerIteration: number; threads: number } {
  const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
  const spectral = spectralDataOf(analyze(system));
  return (id) => {
    const run = runAlgorithm(system, id, spectral, { tolerance: 1e-300, maxIterations: iterations, traceCap: DEFAULT_TRACE_CAP });
    return { msPerIteration: run.wallTimeMs / run.iterations, threads: run.threads ?? 1 };
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
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
      storages: { type: 'string', default: 'dense,csr' },
      rounds: { type: 'string', default: '3' },
      'worker-concurrency': { type: 'string' },
    },
  });
  const backend = positionals[0] as BackendName;
  if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: jobPath.ts <typescript|native> [options]');
  selectBackend(backend);
  const algorithms = args.algorithms.split(',') as AlgorithmId[];
  const storages = new Set(args.storages.split(','));
  const rounds = Math.max(1, Number(args.rounds));
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

  // The library's systems and analyses first, while no service runs.
  const denseLibrary = storages.has('dense') ? librarySide(generateMatrix(denseSpec), denseM, denseIterations) : null;
  const mmFile = join(CACHE, `jobpath-poisson-k${k}.mtx`);
  let csrLibrary: ReturnType<typeof librarySide> | null = null;
  if (storages.has('csr')) {
    const poisson = poisson2d(k);
    writeMatrixMarket(poisson, mmFile);
    csrLibrary = librarySide(poisson, csrM, csrIterations);
  }

  const env: NodeJS.ProcessEnv = { NUMERIC_BACKEND: backend, LOG_LEVEL: 'warn', TRACE_CAP: String(DEFAULT_TRACE_CAP) };
  if (workerConcurrency !== undefined) env.WORKER_CONCURRENCY = workerConcurrency;
  const service = await startService(env, `service-jobpath-${backend}.log`);
  try {
    /** Rounds of: each algorithm through the library, then one job running them all; then one case per algorithm. */
    const measure = async (
      storage: JobPathCase['storage'],
      problem: string,
      library: ReturnType<typeof librarySide>,
      submit: () => Promise<Awaited<ReturnType<typeof solveJob>>>,
    ): Promise<void> => {
      const lib = new Map<AlgorithmId, number[]>(algorithms.map((a) => [a, []]));
      const job = new Map<AlgorithmId, number[]>(algorithms.map((a) => [a, []]));
      const threads = new Map<AlgorithmId, number>();
      let iterations = 0;
      for (let round = 0; round < rounds; round++) {
        for (const algorithm of algorithms) {
          const run = library(algorithm);
          lib.get(algorithm)!.push(run.msPerIteration);
          threads.set(algorithm, run.threads);
        }
        // The library's runs block this process's event loop for seconds: a pooled keep-alive connection
        // the service closed meanwhile (its 72 s idle timeout) is only seen closed once the loop polls
        // again, and a request sent on it at once fails with 'other side closed'.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const runs = await submit();
        for (const algorithm of algorithms) {
          iterations = runs[algorithm].iterations;
          job.get(algorithm)!.push(runs[algorithm].wallTimeMs / iterations);
        }
        log(
          `  ${backend} ${storage} ${problem} round ${round + 1}: ` +
            algorithms
              .map((a) => `${a} job ${job.get(a)!.at(-1)!.toFixed(3)} / library ${lib.get(a)!.at(-1)!.toFixed(3)} ms/it`)
              .join(', '),
        );
      }
      for (const algorithm of algorithms) {
        const libraryTimes = lib.get(algorithm)!;
        const jobTimes = job.get(algorithm)!;
        const libraryBest = Math.min(...libraryTimes);
        const jobBest = Math.min(...jobTimes);
        const libraryMedian = median(libraryTimes);
        const jobMedian = median(jobTimes);
        cases.push({
          storage,
          problem,
          algorithm,
          iterations,
          libraryMsPerIteration: libraryBest,
          jobMsPerIteration: jobBest,
          ratio: jobBest / libraryBest,
          libraryThreads: threads.get(algorithm)!,
          rounds,
          libraryMedianMsPerIteration: libraryMedian,
          jobMedianMsPerIteration: jobMedian,
          medianRatio: jobMedian / libraryMedian,
        });
        log(
          `  ${backend} ${storage} ${problem} ${algorithm}: best job ${jobBest.toFixed(3)} / library ${libraryBest.toFixed(3)} ms/it ` +
            `(${(jobBest / libraryBest).toFixed(2)}), median ${jobMedian.toFixed(3)} / ${libraryMedian.toFixed(3)} (${(jobMedian / libraryMedian).toFixed(2)})`,
        );
      }
    };
    if (denseLibrary)
      await measure('dense', `gaussian-n${denseN}-m${denseM}`, denseLibrary, () =>
        solveJob(service, denseSpec, denseM, algorithms, denseIterations),
      );
    if (csrLibrary) {
      const id = await uploadMatrixMarket(service.baseUrl, mmFile);
      await measure('csr', `poisson-n${k * k}-m${csrM}`, csrLibrary, () =>
        solveJob(service, { format: 'stored', id }, csrM, algorithms, csrIterations),
      );
    }
  } catch (error) {
    const status = service.exitStatus();
    report.error = `${(error as Error).message}${status === null ? '' : `; the service exited (${status}), see bench/.cache/service-jobpath-${backend}.log`}`;
  } finally {
    await service.stop();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
