/**
 * The scaled Gram operator's factor solves on the solver threads (src/solvers/analysis/scaledGramShard.ts): S' v, and
 * lambda_max(S) by Lanczos on it, are those of the calling thread alone to the bit, on both backends; and the
 * partition advisor's exact pass (sparseLambdaMaxSAndAnglesWork, which runs it after the pairs' angles) gives the
 * same values on one thread and on two, and the analysis' own lambda_max(S) (to rounding) and theta_H.
 */
import { expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import type { CsrSystem } from '../../../src/solvers/distributed/sparseSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { holdBlasToOneThread, selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { lambdaMaxSWork, scaledGramOperator } from '../../../src/solvers/analysis/kappaS.js';
import { threadedMachineSolvesPass } from '../../../src/solvers/analysis/scaledGramShard.js';
import {
  machineGramSolves,
  pairAnglesSpec,
  sOptionsOf,
  sparseAnglesOfPartitionWork,
  sparseLuContextWork,
  sparseSOfPartitionWork,
} from '../../../src/solvers/analysis/sparseAnalysis.js';
import { sparseLambdaMaxSAndAnglesWork } from '../../../src/solvers/analysis/sparseAnalysisTasks.js';
import { setParallelAnalysisTasksMinNnz, setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { sharedCopy } from '../../../src/solvers/parallel/workerThreads.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { machineColumnSlots, overlapTwoColouring } from '../../../src/solvers/sparse/spectrumOfS.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { describeEachBackend } from '../../support/backends.js';

/** Poisson 24 x 24 with its rows dealt round-robin to 5 machines: every machine meets the others (no reflection). */
function roundRobinSystem(): CsrSystem {
  const A = poisson2d(24);
  const assignment = Array.from({ length: A.rows }, (_, r) => r % 5);
  return buildDistributedSystem(createProblem({ A, partition: { assignment } }));
}

describeEachBackend('the scaled Gram operator on two threads', () => {
  it("applies S' and finds lambda_max(S) as one thread does, to the bit", () => {
    const system = roundRobinSystem();
    const slots = machineColumnSlots(system.A, system.partition.rowsOf, true);
    expect(overlapTwoColouring(slots)).toBeNull();
    const factors = (sharedCopy(pairAnglesSpec(system, slots)) as ReturnType<typeof pairAnglesSpec>).factors;
    const kernels = selectedKernels();
    const options = sOptionsOf(kernels, system.A.rows);
    const solves = machineGramSolves(factors);
    const one = scaledGramOperator(slots, solves);
    const v = new SeededRandom(11).fillSigned(new Float64Array(system.A.rows));
    const expected = new Float64Array(v.length);
    one.apply(v, expected);
    const release = holdBlasToOneThread(kernels.blasThreads);
    const threaded = threadedMachineSolvesPass(slots, factors, kernels.backend, 2);
    try {
      expect(threaded.threads).toBe(2);
      const got = new Float64Array(v.length);
      scaledGramOperator(slots, threaded.pass).apply(v, got);
      expect(got).toEqual(expected);
      expect(runSync(lambdaMaxSWork(slots, threaded.pass, options))).toEqual(runSync(lambdaMaxSWork(slots, solves, options)));
    } finally {
      threaded.dispose();
      release();
      solves.release();
    }
  });

  it("gives the advisor's exact pass the analysis' lambda_max(S) and angles, on one thread and on two", () => {
    const system = roundRobinSystem();
    const kernels = selectedKernels();
    const lu = runSync(sparseLuContextWork(system.A));
    const analysed = runSync(sparseSOfPartitionWork(kernels, system, lu));
    const angles = runSync(sparseAnglesOfPartitionWork(kernels, system));
    const one = runSync(sparseLambdaMaxSAndAnglesWork(kernels, system, true));
    setSolverThreads(2);
    const previous = setParallelAnalysisTasksMinNnz(0);
    try {
      const two = runSync(sparseLambdaMaxSAndAnglesWork(kernels, system, true));
      expect(two).toEqual(one);
    } finally {
      setParallelAnalysisTasksMinNnz(previous);
      setSolverThreads('auto');
    }
    // The analysis' one-thread path leaves OpenBLAS its threads (the Lanczos basis' dgemv sums in another order on the
    // native backend): the same value to rounding.
    expect(Math.abs(one.lambdaMaxS!.value / analysed.lambdaMaxS.value - 1)).toBeLessThan(1e-12);
    expect(one.angles!.thetaH).toBe(angles.thetaH);
  });
});
