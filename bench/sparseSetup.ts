/**
 * The sparse setup (issue 11 §5: partition + each machine's factorization of A_i A_i^T) side by side
 * with SciPy, interleaved round by round so that the load of a shared machine falls on both alike:
 * each round builds the system on the TypeScript backend, on the native one (when the addon has its
 * sparse part), and runs bench/reference.py's sparse_setup (splu of each A_i A_i^T) in a Python child
 * on the same cached arrays (bench/sparseProblems.ts). Prints each side's times, best and median,
 * and the ratios to SciPy's, as one JSON line, with the load average before and after. Our setup
 * factors the machines on `threads` threads (default: the solver setting, os.availableParallelism();
 * src/solvers/parallel/taskPool.ts), SciPy's reference loops over them on one core: pass 1 for the
 * one-thread figure.
 *
 *   node --import tsx --expose-gc bench/sparseSetup.ts [poisson-n1000000-m100] [rounds = 3] [threads = auto]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { nativeSparse } from '../src/solvers/linalg/backend.js';
import {
  buildDistributedSystem,
  createProblem,
  partitionFromAssignment,
  setSolverThreads,
  useBackend,
  type BackendName,
} from '../src/solvers/index.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { MATRICES_DIR } from '../test/support/sharedData.js';
import { BENCH, CACHE } from './processes.js';
import { sparseProblemByName, writeSparseProblemCache, type SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const SCIPY_SETUP = `
import json, sys, time
import numpy as np, scipy.sparse as sp
sys.path.insert(0, sys.argv[1])
from reference import sparse_setup
spec = json.load(open(sys.argv[2]))
n, m, nnz = spec["n"], spec["m"], spec["nnz"]
a = sp.csr_matrix((np.fromfile(spec["valuesFile"], dtype="<f8"), np.fromfile(spec["colIdxFile"], dtype="<i4"),
                   np.fromfile(spec["rowPtrFile"], dtype="<i4")), shape=(n, n))
assignment = np.fromfile(spec["assignmentFile"], dtype="<i4")
starts = [int(s) for s in np.searchsorted(assignment, np.arange(m))] + [n]
warm = sp.random(400, 400, density=0.02, random_state=1, format="csr") + sp.identity(400, format="csr") * 4
sparse_setup(warm, [0, 100, 200, 300, 400])
t0 = time.perf_counter()
sparse_setup(a, starts)
print(json.dumps({"seconds": time.perf_counter() - t0}))
`;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  const name = process.argv[2] ?? 'poisson-n1000000-m100';
  const rounds = Number(process.argv[3] ?? 3);
  const threads = setSolverThreads(process.argv[4] === undefined || process.argv[4] === 'auto' ? 'auto' : Number(process.argv[4]));
  let path = join(CACHE, `${name}.sparse.json`);
  if (!existsSync(path)) {
    const policy = { tolerance: 1e-8, maxSolveIterations: 1, solveBudgetSeconds: 1, repeatScale: 1 };
    path = (await writeSparseProblemCache(sparseProblemByName(name, MATRICES_DIR), CACHE, policy, 0)).path;
  }
  const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
  const { m } = spec;
  const { A, assignment } = readSparseProblemArrays(spec);
  const partition = partitionFromAssignment(assignment, m);
  const backends: BackendName[] = ['typescript'];
  useBackend('native');
  if (nativeSparse() !== null) backends.push('native');
  const setup = (backend: BackendName): number => {
    useBackend(backend);
    (globalThis as { gc?: () => void }).gc?.();
    const t0 = performance.now();
    buildDistributedSystem(createProblem({ A, partition }));
    return (performance.now() - t0) / 1e3;
  };
  // Warm-up (JIT) on a small system, as bench/sparseStages.ts.
  for (const backend of backends) {
    useBackend(backend);
    buildDistributedSystem(createProblem({ A: poisson2d(40), partition: { machines: 4 } }));
  }
  const times: Record<string, number[]> = { scipy: [] };
  for (const backend of backends) times[backend] = [];
  const loadBefore = loadavg()[0];
  for (let round = 0; round < rounds; round++) {
    for (const backend of backends) times[backend].push(setup(backend));
    const child = spawnSync('python3', ['-c', SCIPY_SETUP, BENCH, path], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, // importing reference.py leaves no bench/__pycache__
    });
    if (child.status !== 0) throw new Error(`SciPy setup failed: ${child.stderr}`);
    times.scipy.push((JSON.parse(child.stdout.trim().split('\n').pop()!) as { seconds: number }).seconds);
  }
  const summary: Record<string, unknown> = {};
  for (const [side, xs] of Object.entries(times)) {
    summary[side] = {
      seconds: xs.map((x) => Number(x.toFixed(3))),
      best: Number(Math.min(...xs).toFixed(3)),
      median: Number(median(xs).toFixed(3)),
    };
  }
  const ratios: Record<string, { best: number; median: number; perRound: number[] }> = {};
  for (const backend of backends) {
    ratios[backend] = {
      best: Number((Math.min(...times[backend]) / Math.min(...times.scipy)).toFixed(3)),
      median: Number((median(times[backend]) / median(times.scipy)).toFixed(3)),
      perRound: times[backend].map((x, r) => Number((x / times.scipy[r]).toFixed(3))),
    };
  }
  const load = { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0].toFixed(2)) };
  process.stdout.write(`${JSON.stringify({ problem: name, rounds, threads, times: summary, ratiosToScipy: ratios, loadAverage: load })}\n`);
}

await main();
