/**
 * The analysis split into parts (Algorithm 2, src/solvers/analysis/splitAnalysis.ts) equals the
 * one-piece `analyze`: every value to 1e-14 relative (in fact bit for bit: the parts run the same
 * code on the same inputs), theta_H and its pair identical, on every heterogeneity fixture, on a
 * case with m = 200 and on a nearly parallel one, whatever the number of groups; parts in any order.
 */
import { expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import {
  analysisPartWork,
  analyzeInParts,
  combineAnalysisPartsWork,
  planAnalysisParts,
  partInputOf,
  supportSizesOf,
} from '../../../src/solvers/analysis/splitAnalysis.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import { describeEachBackend } from '../../support/backends.js';
import { gaussianSystem } from '../../support/systems.js';
import { fixtureMatrix, loadFixtures } from '../../support/fixtures.js';
import { expectSameAnalysis } from '../../support/sameAnalysis.js';

describeEachBackend('the analysis split into parts (Algorithm 2)', () => {
  // sherman5 (n = 3312) takes a minute per analysis on the TypeScript backend; the others, milliseconds to seconds.
  for (const f of loadFixtures().filter((x) => x.expected.n <= 2000)) {
    it(`equals the one-piece analysis on ${f.name}`, { timeout: 120_000 }, () => {
      const A = fixtureMatrix(f);
      const partition = partitionFromAssignment(Int32Array.from(f.partition.assignment), f.expected.m);
      const system = buildDistributedSystem({ n: A.rows, A, b: new Float64Array(A.rows).fill(1), xTrue: null, partition });
      const whole = analyze(system);
      for (const groups of [1, 3]) expectSameAnalysis(analyzeInParts(system, groups), whole);
    });
  }

  it('equals the one-piece analysis with m = 200 machines (n = 400, mean 1: many nearly parallel pairs)', { timeout: 120_000 }, () => {
    const system = gaussianSystem(400, 200, 11, { mean: 1 });
    expectSameAnalysis(analyzeInParts(system, 5), analyze(system));
  });

  it('combines parts given in any order, and plans every pair and row exactly once', () => {
    const system = gaussianSystem(90, 12, 3, { mean: 0 });
    const plan = planAnalysisParts(90, system.partition.sizes, supportSizesOf(system.A, system.partition), 4);
    const pairs = plan.flatMap(({ part }) => (part.kind === 'pairs' ? [part.machines] : [])).sort((a, b) => a.from - b.from);
    const rows = plan.flatMap(({ part }) => (part.kind === 'local-angles' ? [part.rows] : [])).sort((a, b) => a.from - b.from);
    expect(pairs[0].from).toBe(0);
    expect(rows[0].from).toBe(0);
    for (let k = 1; k < pairs.length; k++) expect(pairs[k].from).toBe(pairs[k - 1].to);
    for (let k = 1; k < rows.length; k++) expect(rows[k].from).toBe(rows[k - 1].to);
    expect(rows.at(-1)!.to).toBe(90);
    expect(pairs.at(-1)!.to).toBeGreaterThanOrEqual(11);
    expect(plan.map((p) => p.work)).toEqual([...plan.map((p) => p.work)].sort((a, b) => b - a));

    const input = partInputOf(system);
    const results = plan.map(({ part }) => runSync(analysisPartWork(input, part))).reverse();
    expectSameAnalysis(runSync(combineAnalysisPartsWork(90, system.partition, results)), analyze(system));
  });

  it('refuses to combine an incomplete set of parts', () => {
    const system = gaussianSystem(30, 5, 4, { mean: 0 });
    const plan = planAnalysisParts(30, system.partition.sizes, supportSizesOf(system.A, system.partition), 2);
    const input = partInputOf(system);
    const results = plan
      .filter(({ part }) => part.kind !== 'pairs' || part.machines.from > 0)
      .map(({ part }) => runSync(analysisPartWork(input, part)));
    expect(() => runSync(combineAnalysisPartsWork(30, system.partition, results))).toThrow(/incomplete parts/);
  });
});
