/**
 * The dense analysis on the solver threads (src/solvers/analysis/denseAnalysisTasks.ts) gives the
 * one-thread Analysis bit for bit: as a whole (threads forced on small systems), and task by task
 * for the tasks a worker computes (held until a worker has run one, however slowly it starts).
 */
import { afterEach, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { squareMatrixConditioningWork } from '../../../src/solvers/analysis/kappaS.js';
import {
  anglesTasksSpec,
  denseAnalysisThreads,
  sharedAnalysisSystem,
  spectralTasksSpec,
  type DenseAnalysisTaskResult,
} from '../../../src/solvers/analysis/denseAnalysisTasks.js';
import { computeGramBlocks, gramBlocksLayoutWork, pairIndex } from '../../../src/solvers/analysis/gramBlocks.js';
import { computeLocalAngles, localAnglesFrom, mergeLocalAnglesScans } from '../../../src/solvers/analysis/localAngles.js';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem, rowSpaceSystem, type DenseSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { sharedCopy } from '../../../src/solvers/parallel/workerThreads.js';
import {
  DEFAULT_PARALLEL_DENSE_ANALYSIS_MIN_N,
  setParallelDenseAnalysisMinN,
  setSolverThreads,
} from '../../../src/solvers/parallel/threads.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import type { GramBlocks } from '../../../src/solvers/analysis/gramBlocks.js';
import { describeEachBackend } from '../../support/backends.js';
import { onSetupThreads } from '../../support/setupThreads.js';
import { gaussianSystem, systemOf } from '../../support/systems.js';
import { heldTasksWork } from '../parallel/heldTasks.js';

/** A banded n x n system on m contiguous machines: only neighbouring machines' supports meet (G_ij = 0 exactly for the others). */
function bandedSystem(n: number, m: number): DenseSystem {
  const data = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = Math.max(0, i - 2); j <= Math.min(n - 1, i + 2); j++) data[i * n + j] = i === j ? 4 : Math.sin(i * n + j + 1);
  }
  return buildDistributedSystem({
    n,
    A: { rows: n, cols: n, data },
    b: new Float64Array(n).fill(1),
    xTrue: null,
    partition: partitionFromAssignment(
      Int32Array.from({ length: n }, (_, k) => Math.floor((k * m) / n)),
      m,
    ),
  });
}

const withThreads = <T>(threads: number, body: () => T): T => onSetupThreads(threads, body, setParallelDenseAnalysisMinN);

const analyzeOn = (threads: number, system: DenseSystem): Analysis => withThreads(threads, () => analyze(system));

afterEach(() => {
  setParallelDenseAnalysisMinN(DEFAULT_PARALLEL_DENSE_ANALYSIS_MIN_N);
  setSolverThreads('auto');
});

describeEachBackend('the dense analysis on threads', (backend) => {
  it('runs on threads on the TypeScript backend only, from the size threshold on, and on square systems', () => {
    const system = gaussianSystem(40, 4, 1);
    withThreads(2, () => expect(denseAnalysisThreads(selectedKernels(), system)).toBe(backend === 'typescript' ? 2 : 1));
    withThreads(1, () => expect(denseAnalysisThreads(selectedKernels(), system)).toBe(1));
    setSolverThreads(2);
    expect(denseAnalysisThreads(selectedKernels(), system)).toBe(1);
    expect(() => setParallelDenseAnalysisMinN(Number.NaN)).toThrow();
  });

  for (const [name, make] of [
    ['a Gaussian system (mean 1: nearly parallel pairs, the sine route)', () => gaussianSystem(120, 6, 5)],
    ['a Gaussian system with m = 30 (several pairs per task)', () => gaussianSystem(90, 30, 7, { mean: 0 })],
    ['a banded system (disjoint supports: G_ij = 0)', () => bandedSystem(96, 6)],
  ] as const) {
    it(`gives the one-thread Analysis bit for bit on ${name}`, { timeout: 60_000 }, () => {
      const system = make();
      expect(analyzeOn(2, system)).toEqual(analyzeOn(1, system));
    });
  }

  it('gives the one-thread values for the tasks a worker computes', { timeout: 60_000 }, () => {
    const system = gaussianSystem(80, 5, 9);
    const shared = sharedAnalysisSystem(rowSpaceSystem(system));
    const gram = sharedCopy(runSync(gramBlocksLayoutWork(shared.machines))) as GramBlocks;
    const spectral = spectralTasksSpec(shared, gram, 2);
    const first = runSync(heldTasksWork<DenseAnalysisTaskResult>('dense', spectral, spectral.tasks.length, backend));
    const reference = computeGramBlocks(rowSpaceSystem(system).machines);
    expect(gram.data).toEqual(reference.data);
    expect(gram.blockStart).toEqual(reference.blockStart);
    expect(first[0]).toEqual({
      kind: 'matrix-conditioning',
      conditioning: runSync(squareMatrixConditioningWork(selectedKernels(), rowSpaceSystem(system))),
    });
    const single = analyzeOn(1, system);
    const s = first[1];
    if (s.kind !== 's-smallest' || s.inverse === null) throw new Error('expected 1 / lambda_min(S)');
    expect(1 / s.inverse.largest).toBe(single.conditioning.lambdaMinS);

    const angles = anglesTasksSpec(shared, gram, 2);
    const rest = runSync(heldTasksWork<DenseAnalysisTaskResult>('dense', angles, angles.tasks.length, backend));
    const scans = rest.flatMap((r) => (r.kind === 'local-angles' ? [r] : []));
    rest.forEach((r, index) => {
      const task = angles.tasks[index];
      if (r.kind !== 'pairs' || task.kind !== 'pairs') return;
      for (let i = 0, pair = 0; i < 5; i++) {
        for (let j = i + 1; j < 5; j++, pair++) {
          expect(pair).toBe(pairIndex(5, i, j));
          if (pair >= task.pairs.from && pair < task.pairs.to)
            expect(r.theta[pair - task.pairs.from]).toBe(single.heterogeneity.theta[i][j]);
        }
      }
    });
    const local = localAnglesFrom(mergeLocalAnglesScans(scans.map((r) => r.scan)), scans[0].rowNorms, system.partition);
    expect(local).toEqual(computeLocalAngles(system.A, system.partition));
  });

  it('throws the one-thread error on a singular matrix', () => {
    const rows = [
      [1, 2, 3],
      [2, 4, 6],
      [0, 1, 5],
    ];
    const system = systemOf(rows, [0, 1, 1], 2);
    const single = (() => {
      try {
        analyzeOn(1, system);
      } catch (error) {
        return error;
      }
    })();
    expect(single).toBeInstanceOf(SingularMatrixError);
    expect(() => analyzeOn(2, system)).toThrow(single);
  });
});
