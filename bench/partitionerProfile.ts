/**
 * The TypeScript multilevel partitioner (src/solvers/partitioning/multilevel.ts) on the row graph of a sparse bench
 * problem, timed alone against METIS (when the native addon has it) on the same graph, and METIS's partition polished
 * by the k-way FM passes as the advisor lists it: seconds, edge cut, and whether every part is within the default
 * imbalance (issue 25).
 *
 *   node --import tsx bench/partitionerProfile.ts <sparse.json> [--m 100]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { metisPartition } from '../src/solvers/partitioning/metis.js';
import { DEFAULT_IMBALANCE, edgeCut, machineSizeBounds, multilevelPartition, refineKway } from '../src/solvers/partitioning/multilevel.js';
import { rowGraph } from '../src/solvers/partitioning/rowGraph.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const { positionals, values: args } = parseArgs({
  allowPositionals: true,
  options: { m: { type: 'string' }, repeats: { type: 'string', default: '1' } },
});
const [path] = positionals;
if (!path) throw new Error('usage: partitionerProfile.ts <sparse.json> [--m 100] [--repeats 1]');
// The native backend when it loads (for METIS); the multilevel partitioner is TypeScript on either.
try {
  selectBackend('native');
} catch {
  selectBackend('typescript');
}
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
const m = args.m === undefined ? spec.m : Number(args.m);
const { A } = readSparseProblemArrays(spec);
const kernels = selectedKernels();
const t0 = performance.now();
const graph = rowGraph(kernels, A);
const graphSeconds = (performance.now() - t0) / 1e3;
const { lo, hi } = machineSizeBounds(graph.n, m, DEFAULT_IMBALANCE);
const report = (partitioner: string, run: () => Int32Array): void => {
  let best = Infinity;
  let assignment: Int32Array = new Int32Array(0);
  for (let r = 0; r < Number(args.repeats); r++) {
    const start = performance.now();
    assignment = run();
    best = Math.min(best, (performance.now() - start) / 1e3);
  }
  const sizes = new Int32Array(m);
  for (const part of assignment) sizes[part]++;
  const within = sizes.every((size) => size >= lo && size <= hi);
  console.log(
    JSON.stringify({ partitioner, n: graph.n, m, seconds: Math.round(best * 100) / 100, edgeCut: edgeCut(graph, assignment), within }),
  );
};
console.log(JSON.stringify({ rowGraphSeconds: Math.round(graphSeconds * 100) / 100, edges: graph.ptr[graph.n] / 2 }));
report('multilevel', () => multilevelPartition(graph, m, { imbalance: DEFAULT_IMBALANCE }));
const { metis } = kernels;
if (metis !== null) {
  report('metis', () => metisPartition(metis, graph, m, DEFAULT_IMBALANCE));
  // As the advisor lists it: METIS's partition polished by the k-way FM passes.
  report('metis, polished', () => {
    const assignment = metisPartition(metis, graph, m, DEFAULT_IMBALANCE);
    refineKway(graph, assignment, m, lo, hi);
    return assignment;
  });
}
