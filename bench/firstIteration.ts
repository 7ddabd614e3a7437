/**
 * Time to a solve job's first iteration against its setup, through computeJob as the worker runs it:
 * a CSR 2-D Poisson system (src/solvers/sparse/generators.ts poisson2d) in contiguous strips, one
 * D-HBM run; the wall time at which each phase first reports (the setup is 'bases', the spectral
 * data 'conditioning', the first 'solve' report comes after the first iteration). Two jobs: the
 * parameters from the spectral estimates, then every parameter given (the estimates skipped). Each
 * setup's end is its last 'bases' report (within a 20 ms slice). Each
 * job is cancelled at its first iteration unless --whole (then it runs --iterations and the rest of
 * the analysis). Prints one JSON line per job.
 *
 *   node --import tsx bench/firstIteration.ts <typescript|native> [--n 250000] [--m 100] [--iterations 30] [--whole] [--only estimates|given]
 */
import { computeJob, type ComputeInput } from '../src/jobs/computeJob.js';
import type { WorkProgress } from '../src/solvers/cooperative.js';
import { buildPartition } from '../src/solvers/input/partition.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend } from './backends.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

async function main(): Promise<void> {
  const backend = process.argv[2];
  if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: firstIteration.ts <typescript|native> [options]');
  selectBackend(backend);
  const n = Number(option('n', '250000'));
  const m = Number(option('m', '100'));
  const iterations = Number(option('iterations', '30'));
  const whole = process.argv.includes('--whole');
  const only = option('only', '');
  const k = Math.round(Math.sqrt(n));
  const A = poisson2d(k);
  const partition = buildPartition({ machines: m }, A.rows);
  // Every D-HBM parameter: a step 1 / L' with L' >= L = lambda_max(A^T A) <= 64 for this stencil, and a momentum.
  const givenParameters = { dhbm: { alpha: 1 / 64, beta: 0.9 } };
  for (const mode of ['estimates', 'given'] as const) {
    if (only !== '' && only !== mode) continue;
    const input: ComputeInput = {
      type: 'solve',
      matrix: { storage: 'csr', A },
      rhs: null,
      partition,
      algorithms: ['dhbm'],
      options: {
        tolerance: 1e-300,
        maxIterations: iterations,
        stopOnStagnation: false,
        parameters: mode === 'given' ? givenParameters : {},
      },
    };
    const controller = new AbortController();
    const firstSeen: Record<string, number> = {};
    let lastBases = 0;
    const started = performance.now();
    const onProgress = (progress: WorkProgress): void => {
      const at = (performance.now() - started) / 1e3;
      const key = firstSeen.solve === undefined ? progress.phase : `${progress.phase} after the runs`;
      firstSeen[key] ??= at;
      if (progress.phase === 'bases') lastBases = at;
      if (progress.phase === 'solve' && !whole) controller.abort();
    };
    const outcome = await computeJob(input, { signal: controller.signal, onProgress, traceCap: 64, sliceMs: 20 });
    const total = (performance.now() - started) / 1e3;
    // The setup ('bases': the partition's rows and each machine's Gram factorization) ends at its last
    // report (reports are at most one slice, 20 ms, apart).
    const setupSeconds = lastBases;
    const firstIterationSeconds = firstSeen.solve;
    process.stdout.write(
      `${JSON.stringify({
        problem: `poisson-n${A.rows}-m${m}`,
        backend,
        mode,
        setupSeconds,
        firstIterationSeconds,
        ratio: firstIterationSeconds / setupSeconds,
        firstSeen,
        totalSeconds: total,
        status: outcome.status,
        ...(whole ? { analysisComplete: outcome.result?.analysisCompleted === true } : {}),
      })}\n`,
    );
  }
}

await main();
