/**
 * What writing a partition of n rows as JSON costs in process, as GET /v1/jobs/{id}/partition wrote it before
 * 9f385c4 (the assignment listed, checked by zod against JobPartitionSchema, zod's copy stringified) and as it does
 * now (the assignment joined after the rest was checked). Best of `rounds` for each part, milliseconds.
 *
 *   node --import tsx bench/partitionResponse.ts [--n 1000000] [--m 100] [--rounds 5]
 */
import { parseArgs } from 'node:util';
import { JobPartitionSchema } from '../src/api/schemas/job.js';
import { assignmentList } from '../src/solvers/problem.js';

const { values: args } = parseArgs({
  options: { n: { type: 'string', default: '1000000' }, m: { type: 'string', default: '100' }, rounds: { type: 'string', default: '5' } },
});
const n = Number(args.n);
const m = Number(args.m);
const assignment = new Int32Array(n);
for (let k = 0; k < n; k++) assignment[k] = Math.floor((k * m) / n);
const sizes = Array.from({ length: m }, (_, i) => assignment.filter((machine) => machine === i).length);
const best = { list: Infinity, zod: Infinity, stringify: Infinity, join: Infinity };
let bytes = 0;
for (let round = 0; round < Number(args.rounds); round++) {
  let t = performance.now();
  const list = assignmentList(assignment);
  best.list = Math.min(best.list, performance.now() - t);
  t = performance.now();
  const checked = JobPartitionSchema.parse({ id: 'p', n, m, sizes, assignment: list });
  best.zod = Math.min(best.zod, performance.now() - t);
  t = performance.now();
  JSON.stringify(checked);
  best.stringify = Math.min(best.stringify, performance.now() - t);
  t = performance.now();
  bytes = `${JSON.stringify({ id: 'p', n, m, sizes, assignment: [] }).slice(0, -3)}[${assignment.join(',')}]}`.length;
  best.join = Math.min(best.join, performance.now() - t);
}
const before = best.list + best.zod + best.stringify;
process.stdout.write(`${JSON.stringify({ n, m, bytes, bestMs: best, beforeMs: before, afterMs: best.join })}\n`);
