/**
 * The whole sparse analysis' timeline: the phase and fraction it reports (its progress), with the seconds since it
 * began, as a job sees them; for finding which part sets the wall time when the parts run on two threads.
 *
 *   node --import tsx bench/sparseAnalysisTimeline.ts <sparse.json> <typescript|native>
 */
import { readFileSync } from 'node:fs';
import { buildDistributedSystem, createProblem, partitionFromAssignment } from '../src/solvers/index.js';
import { analyzeWork } from '../src/solvers/analysis/analyze.js';
import { selectBackend } from './backends.js';
import { readSparseProblemArrays } from './stageIo.js';
import type { SparseProblemFile } from './sparseProblems.js';

const [problemPath, backendArg] = process.argv.slice(2);
if (!problemPath || (backendArg !== 'typescript' && backendArg !== 'native')) {
  throw new Error('usage: sparseAnalysisTimeline.ts <sparse.json> <typescript|native>');
}
const spec = JSON.parse(readFileSync(problemPath, 'utf8')) as SparseProblemFile;
selectBackend(backendArg);
const { A, assignment } = readSparseProblemArrays(spec);
const system = buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, spec.m) }));
const start = performance.now();
const work = analyzeWork(system);
let last = '';
for (;;) {
  const step = work.next();
  if (step.done) break;
  const progress = step.value;
  if (progress === undefined) continue;
  // One line per phase, and per tenth of the phase's progress.
  const line = `${progress.phase} ${Math.floor((progress.fraction ?? 0) * 10) / 10}`;
  if (line !== last) {
    process.stdout.write(`${((performance.now() - start) / 1e3).toFixed(1)} s  ${line}\n`);
    last = line;
  }
}
process.stdout.write(`${((performance.now() - start) / 1e3).toFixed(1)} s  done\n`);
