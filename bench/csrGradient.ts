/**
 * One D-HBM iteration on CSR storage (issue 11 §5: native <= 1.0 x SciPy, TypeScript <= 1.5 x), ours
 * on both backends and SciPy's A.T @ (A @ x - b) interleaved in one run, so that the ratios are
 * measured under the same load: per round, the best of `--repeats` steps of the TypeScript backend,
 * of the native one, and of SciPy (bench/csrGradientReference.py, a persistent child process; it
 * keeps the faster of reference.py's `global` and `machines` forms, as the bench's target does).
 * Prints, per problem and backend, the median over rounds of (ours / SciPy) and the ratio of the
 * best times, and writes them to bench/.cache/csrGradient.json.
 *
 *   node --import tsx bench/csrGradient.ts [--problems 1138_bus-csr-m10,...] [--rounds 7] [--repeats 20]
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  activeBackend,
  algorithms,
  buildDistributedSystem,
  createProblem,
  nativeBlas,
  partitionFromAssignment,
  useBackend,
  type BackendName,
  type IterativeMethod,
} from '../src/solvers/index.js';
import { BENCH, CACHE } from './processes.js';
import { sparseProblemByName, writeSparseProblemCache } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const DEFAULT_PROBLEMS = '1138_bus-csr-m10,sherman5-csr-m10,fs1831-csr-m10,convdiff-n250000-m100,poisson-n1000000-m100';

const { values: args } = parseArgs({
  options: { problems: { type: 'string' }, rounds: { type: 'string' }, repeats: { type: 'string' } },
});
const rounds = Number(args.rounds ?? 7);
const repeats = Number(args.repeats ?? 20);

/** SciPy's side: a child that loads a problem and answers `time <repeats>` with its best step times. */
class Reference {
  private readonly child = spawn('python3', [join(BENCH, 'csrGradientReference.py')], { cwd: BENCH, stdio: ['pipe', 'pipe', 'inherit'] });
  private readonly lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();

  async ask(command: string): Promise<string> {
    this.child.stdin.write(`${command}\n`);
    const line = await this.lines.next();
    if (line.done) throw new Error(`csrGradientReference.py ended without answering ${command}`);
    return line.value;
  }

  quit(): void {
    this.child.stdin.end('quit\n');
  }
}

function bestStep(method: IterativeMethod, count: number): number {
  let best = Infinity;
  for (let k = 0; k < count; k++) {
    const t0 = performance.now();
    method.step();
    best = Math.min(best, (performance.now() - t0) / 1e3);
  }
  return best;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

interface Row {
  problem: string;
  backend: BackendName;
  threads: number;
  medianRatio: number;
  bestRatio: number;
  oursBestSeconds: number;
  scipyBestSeconds: number;
}

async function main(): Promise<void> {
  const backends: BackendName[] = nativeBlas() === null ? ['typescript'] : ['typescript', 'native'];
  const reference = new Reference();
  const rows: Row[] = [];
  const policy = { tolerance: 1e-8, maxSolveIterations: 1, solveBudgetSeconds: 1, repeatScale: 1 };
  for (const name of (args.problems ?? DEFAULT_PROBLEMS).split(',')) {
    const { path, spec } = await writeSparseProblemCache(
      sparseProblemByName(name, join(BENCH, '..', 'test', 'reference', 'matrices')),
      CACHE,
      policy,
      0,
    );
    const { n, m } = spec;
    const { A, assignment } = readSparseProblemArrays(spec);
    const b = Float64Array.from({ length: n }, (_, i) => Math.sin(0.7 * i) + 0.25);
    const partition = partitionFromAssignment(assignment, m);
    // The factorizations of A_i A_i^T are not read by the gradient pass: built once, on the faster backend.
    useBackend(backends[backends.length - 1]);
    const system = buildDistributedSystem(createProblem({ A, rhs: b, partition }));
    await reference.ask(`load ${path}`);
    const methods = backends.map((backend) => {
      useBackend(backend);
      const method = algorithms.dhbm.create(system, { alpha: 1e-30, beta: 0.5 });
      for (let k = 0; k < 3; k++) method.step();
      return method;
    });
    const ours = backends.map((): number[] => []);
    const scipy: number[] = [];
    for (let round = 0; round < rounds; round++) {
      methods.forEach((method, i) => ours[i].push(bestStep(method, repeats)));
      const times = JSON.parse(await reference.ask(`time ${repeats}`)) as { global: number; machines: number };
      scipy.push(Math.min(times.global, times.machines));
    }
    backends.forEach((backend, i) => {
      const row: Row = {
        problem: name,
        backend,
        threads: methods[i].threads ?? 1,
        medianRatio: median(ours[i].map((t, round) => t / scipy[round])),
        bestRatio: Math.min(...ours[i]) / Math.min(...scipy),
        oursBestSeconds: Math.min(...ours[i]),
        scipyBestSeconds: Math.min(...scipy),
      };
      rows.push(row);
      console.log(
        `${name.padEnd(24)} ${backend.padEnd(10)} ${String(row.threads)} thread(s): ours/SciPy median ${row.medianRatio.toFixed(3)}, ` +
          `best ${row.bestRatio.toFixed(3)} (${(row.oursBestSeconds * 1e6).toFixed(1)} us vs ${(row.scipyBestSeconds * 1e6).toFixed(1)} us)`,
      );
    });
    for (const method of methods) method.dispose?.();
  }
  reference.quit();
  writeFileSync(join(CACHE, 'csrGradient.json'), `${JSON.stringify({ backend: activeBackend(), rounds, repeats, rows }, null, 2)}\n`);
}

await main();
