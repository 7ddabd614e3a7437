/**
 * The setup of each partition advisor candidate's system (src/solvers/distributed/sparseSystem.ts: each machine's rows,
 * its Gram matrix A_i A_i^T and CHOLMOD's or our factorization of it, on the solver threads), as an advise job builds
 * them, on one sparse bench problem: wall and CPU seconds per build (best of `--repeats`), and the machines' factors'
 * nonzeros. METIS's boxes have three times the strips' fill, so their setup is where a threaded BLAS inside each
 * machine's factorization shows (issue 25).
 *
 *   node --import tsx bench/candidateSetups.ts <sparse.json> <typescript|native> [--repeats 2]
 * Prints one JSON line per candidate.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { candidateAssignments } from '../src/solvers/partitioning/advisor.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const { positionals, values: args } = parseArgs({ allowPositionals: true, options: { repeats: { type: 'string', default: '2' } } });
const [path, backend] = positionals;
if (!path || (backend !== 'typescript' && backend !== 'native'))
  throw new Error('usage: candidateSetups.ts <sparse.json> <typescript|native> [--repeats 2]');
selectBackend(backend);
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
const { A, assignment } = readSparseProblemArrays(spec);
const problem = createProblem({ A, partition: partitionFromAssignment(assignment, spec.m) });
const kernels = selectedKernels();
for (const { strategy, assignment: candidate } of candidateAssignments(problem, { kernels })) {
  if (strategy === 'contiguous') continue;
  let best = { wall: Infinity, cpu: Infinity };
  let factorNonzeros = 0;
  for (let r = 0; r < Number(args.repeats); r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const system = buildDistributedSystem({ ...problem, partition: partitionFromAssignment(candidate, spec.m) }, kernels);
    const wall = (performance.now() - t0) / 1e3;
    const cpu = process.cpuUsage(c0);
    if (wall < best.wall) best = { wall, cpu: (cpu.user + cpu.system) / 1e6 };
    factorNonzeros = system.machines.reduce((sum, machine) => sum + (machine.gram?.values.length ?? 0), 0);
  }
  const round = (x: number): number => Math.round(x * 100) / 100;
  console.log(JSON.stringify({ strategy, backend, wallSeconds: round(best.wall), cpuSeconds: round(best.cpu), factorNonzeros }));
}
