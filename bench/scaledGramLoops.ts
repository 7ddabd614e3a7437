/**
 * The calling thread's share of one product with S' = I + Lb^{-1} E Lb^{-T} (src/solvers/analysis/kappaS.ts
 * scaledGramOperator): its loops over A's coupling entries and the rows, the machines' factor solves replaced by a copy
 * so that only the loops are timed. Poisson grids in q x q boxes, mean of 20 products after 5. Run alone:
 *
 *   node --import tsx bench/scaledGramLoops.ts [side:m,...]
 */
import { scaledGramOperator } from '../src/solvers/analysis/kappaS.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { machineColumnSlots } from '../src/solvers/sparse/spectrumOfS.js';

const grids = (process.argv[2] ?? '200:16,1000:100').split(',').map((g) => g.split(':').map(Number));
for (const [side, m] of grids) {
  const A = poisson2d(side);
  const q = Math.round(Math.sqrt(m));
  const groups: number[][] = Array.from({ length: q * q }, () => []);
  for (let r = 0; r < A.rows; r++) groups[Math.floor((Math.floor(r / side) * q) / side) * q + Math.floor(((r % side) * q) / side)].push(r);
  const slots = machineColumnSlots(
    A,
    groups.map((rows) => Int32Array.from(rows)),
  );
  const op = scaledGramOperator(slots, (_transposed, from, to) => to.set(from));
  const v = Float64Array.from({ length: A.rows }, (_, i) => Math.sin(i + 1));
  const out = new Float64Array(A.rows);
  for (let k = 0; k < 5; k++) op.apply(v, out);
  const t0 = performance.now();
  for (let k = 0; k < 20; k++) op.apply(v, out);
  console.log(`Poisson ${side} x ${side} in ${q * q} boxes: ${((performance.now() - t0) / 20).toFixed(2)} ms a product`);
}
