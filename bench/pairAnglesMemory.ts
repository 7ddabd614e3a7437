/**
 * Peak resident memory of the pairs' principal angles alone on one sparse bench problem: every overlapping
 * pair's sparsePairAngleWork in turn on the calling thread, as one analysis task runs them, printing the
 * resident set every 20 pairs and the peak. With `--gc` (and node --expose-gc) a full collection after each
 * pair tells garbage from what is held.
 *
 *   node [--expose-gc] --import tsx bench/pairAnglesMemory.ts <sparse.json> <typescript|native> [--gc]
 */
import { readFileSync } from 'node:fs';
import { machineGramSolves } from '../src/solvers/analysis/sparseAnalysis.js';
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { machineColumnSlots, overlappingMachinePairs, PairAngleContext, sparsePairAngleWork } from '../src/solvers/sparse/spectrumOfS.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const [path, backend, ...flags] = process.argv.slice(2);
if (!path || (backend !== 'typescript' && backend !== 'native'))
  throw new Error('usage: pairAnglesMemory.ts <sparse.json> <typescript|native> [--gc]');
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
selectBackend(backend);
const { A, assignment } = readSparseProblemArrays(spec);
const partition = partitionFromAssignment(assignment, spec.m);
const system = buildDistributedSystem(createProblem({ A, partition }));
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
console.log(`after setup: rss ${mib(process.memoryUsage().rss)} MiB`);
const slots = machineColumnSlots(A, partition.rowsOf);
const pairs = overlappingMachinePairs(slots);
const context = new PairAngleContext(slots, machineGramSolves(system.machines.map((machine) => machine.gram)));
const collect = flags.includes('--gc') ? (globalThis as { gc?: () => void }).gc : undefined;
let peak = 0;
const t0 = performance.now();
for (let q = 0; q < pairs.length / 2; q++) {
  runSync(sparsePairAngleWork(context, pairs[2 * q], pairs[2 * q + 1]));
  collect?.();
  const { rss, arrayBuffers } = process.memoryUsage();
  peak = Math.max(peak, rss);
  if (q % 20 === 0) console.log(`pair ${q}: rss ${mib(rss)} MiB, array buffers ${mib(arrayBuffers)} MiB`);
}
console.log(`${pairs.length / 2} pairs in ${((performance.now() - t0) / 1e3).toFixed(1)} s, peak rss ${mib(peak)} MiB`);
