/**
 * The multilevel partitioner (src/solvers/partitioning/multilevel.ts) timed alone on the row graphs of 2-D Poisson
 * grids, with its edge cut: where its several runs (up to ONE_RUN_VERTICES rows) and its one k-way run (above) take
 * their time (docs/performance.md, "The sparse advice between 20,000 and 100,000 rows"). Run alone:
 *
 *   node --import tsx bench/multilevelRuns.ts [--grids 200:20,250:36,300:36]
 */
import { parseArgs } from 'node:util';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { edgeCut, multilevelPartition, ONE_RUN_VERTICES } from '../src/solvers/partitioning/multilevel.js';
import { rowGraph } from '../src/solvers/partitioning/rowGraph.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';

const { values } = parseArgs({ options: { grids: { type: 'string', default: '200:20,250:36,300:36' } } });
for (const grid of values.grids.split(',')) {
  const [side, m] = grid.split(':').map(Number);
  const g = rowGraph(selectedKernels(), poisson2d(side));
  const t0 = performance.now();
  const assignment = multilevelPartition(g, m);
  const seconds = (performance.now() - t0) / 1e3;
  const runs = g.n > ONE_RUN_VERTICES ? 'one k-way run' : 'the least cut of its runs';
  console.log(
    `${side} x ${side} grid (${g.n} rows) in ${m} parts: ${runs}, edge cut ${edgeCut(g, assignment).toFixed(0)}, ${seconds.toFixed(2)} s`,
  );
}
