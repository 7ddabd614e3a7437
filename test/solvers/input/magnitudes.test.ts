import { describe, expect, it } from 'vitest';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { MagnitudeOutOfRangeError } from '../../../src/solvers/errors.js';
import { analyze, createProblem, fromRows, runAlgorithm, spectralDataOf } from '../../../src/solvers/index.js';
import { LARGEST_MAGNITUDE, SMALLEST_ROW_MAGNITUDE } from '../../../src/solvers/input/magnitudes.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import { startMultipleRhsRun } from '../../../src/solvers/runner/multipleRhs.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import type { CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { thrown } from '../../support/thrown.js';

const A3 = fromRows([
  [2, -1, 0],
  [-1, 2, -1],
  [0.5, -1, 3],
]);

const scaled = (A: DenseMatrix, factor: number): DenseMatrix => ({ ...A, data: A.data.map((v) => v * factor) });
const scaledCsr = (A: CsrMatrix, factor: number): CsrMatrix => ({ ...A, values: A.values.map((v) => v * factor) });

describe('magnitudes the core can square', () => {
  it('the bounds are 2^200 and 2^-200', () => {
    expect(LARGEST_MAGNITUDE).toBe(2 ** 200);
    expect(SMALLEST_ROW_MAGNITUDE).toBe(2 ** -200);
  });

  it('a matrix scaled within the bounds analyzes and solves as the unscaled one: scaling by a power of 2 is exact', () => {
    const b = Float64Array.of(1, -2, 0.5);
    const reference = analyze(buildDistributedSystem(createProblem({ A: A3, rhs: b, partition: { machines: 3 } })));
    for (const exponent of [-190, 190]) {
      const factor = 2 ** exponent;
      const problem = createProblem({ A: scaled(A3, factor), rhs: b.map((v) => v * factor), partition: { machines: 3 } });
      const system = buildDistributedSystem(problem);
      const analysis = analyze(system);
      expect(analysis.conditioning.kappaAtA).toBeCloseTo(reference.conditioning.kappaAtA, 9);
      expect(analysis.conditioning.kappaS).toBeCloseTo(reference.conditioning.kappaS, 9);
      expect(analysis.heterogeneity.thetaH).toBe(reference.heterogeneity.thetaH);
      const run = runAlgorithm(system, 'apc', spectralDataOf(analysis), { tolerance: 1e-12, maxIterations: 1000 });
      expect(run.status).toBe('converged');
      // x solves the unscaled system: A3 x = b to the tolerance.
      const x = run.solution;
      for (let i = 0; i < 3; i++) {
        let row = 0;
        for (let j = 0; j < 3; j++) row += A3.data[i * 3 + j] * x[j];
        expect(row).toBeCloseTo(b[i], 9);
      }
    }
  });

  it('a dense matrix scaled below 2^-200 is refused naming its row, not reported singular', () => {
    const A = scaled(A3, 2 ** -210);
    const error = thrown(() => createProblem({ A, partition: { machines: 3 } }));
    expect(error).toBeInstanceOf(MagnitudeOutOfRangeError);
    expect(error.message).toMatch(/^Row 0 of A has no entry larger than .* below 2\^-200/);
    expect((error as MagnitudeOutOfRangeError).details).toMatchObject({ row: 0 });
    // One row alone: the others are fine.
    const oneRow = fromRows([
      [2, -1, 0],
      [1e-70, -1e-70, 0],
      [0.5, -1, 3],
    ]);
    expect(thrown(() => createProblem({ A: oneRow, partition: { machines: 3 } })).message).toMatch(/^Row 1 of A/);
    // A row with one tiny entry beside a normal one stands: its square is negligible, not lost.
    expect(() =>
      createProblem({
        A: fromRows([
          [1, 1e-300],
          [0, 1],
        ]),
        partition: { machines: 2 },
      }),
    ).not.toThrow();
  });

  it('an entry above 2^200 is refused naming it', () => {
    const A = fromRows([
      [2, -1, 0],
      [-1, 2, 3e60],
      [0.5, -1, 3],
    ]);
    const error = thrown(() => createProblem({ A, partition: { machines: 3 } }));
    expect(error).toBeInstanceOf(MagnitudeOutOfRangeError);
    expect(error.message).toMatch(/^matrix entry \(1, 2\) is 3e\+60 in magnitude, above 2\^200/);
    expect((error as MagnitudeOutOfRangeError).details).toMatchObject({ row: 1, column: 2 });
    // A3's largest entry is 3: 3 * 2^198 < 2^200.
    expect(() => createProblem({ A: scaled(A3, 2 ** 198), partition: { machines: 3 } })).not.toThrow();
  });

  it('CSR: the same bounds over the stored entries, naming the column of the largest', () => {
    // Rows of 4 and -1: row 0's largest is 4 (2^2), at column 0.
    const A = poisson2d(4);
    expect(() => createProblem({ A: scaledCsr(A, 2 ** -190), partition: { machines: 4 } })).not.toThrow();
    expect(thrown(() => createProblem({ A: scaledCsr(A, 2 ** -203), partition: { machines: 4 } })).message).toMatch(/^Row 0 of A/);
    const error = thrown(() => createProblem({ A: scaledCsr(A, 2 ** 199), partition: { machines: 4 } }));
    // Poisson's diagonal is 4: 4 * 2^199 = 2^201, the largest entry of row 0 at column 0.
    expect(error).toBeInstanceOf(MagnitudeOutOfRangeError);
    expect((error as MagnitudeOutOfRangeError).details).toMatchObject({ row: 0, column: 0 });
  });

  it('rhs: above 2^200, or nonzero with every entry below 2^-200, is refused; b = 0 and tiny components stand', () => {
    const tiny = thrown(() => createProblem({ A: A3, rhs: [1e-200, -2e-200, 0], partition: { machines: 3 } }));
    expect(tiny).toBeInstanceOf(MagnitudeOutOfRangeError);
    expect(tiny.message).toMatch(/^rhs's largest entry is -2e-200 \(rhs\[1\]\), below 2\^-200/);
    const huge = thrown(() => createProblem({ A: A3, rhs: [1, 1e200, 0], partition: { machines: 3 } }));
    expect(huge.message).toMatch(/^rhs\[1\] is 1e\+200, above 2\^200/);
    expect(() => createProblem({ A: A3, rhs: [0, 0, 0], partition: { machines: 3 } })).not.toThrow();
    expect(() => createProblem({ A: A3, rhs: [1, 1e-300, 0], partition: { machines: 3 } })).not.toThrow();
  });

  it('several right-hand sides: each column is checked, named by its index', () => {
    const system = buildDistributedSystem(createProblem({ A: A3, rhs: [1, 2, 3], partition: { machines: 3 } }));
    const columns = [Float64Array.of(1, 2, 3), Float64Array.of(1e-250, 0, 0)];
    const error = thrown(() => startMultipleRhsRun(system, 'apc', null, { tolerance: 1e-8, maxIterations: 10 }, columns));
    expect(error).toBeInstanceOf(MagnitudeOutOfRangeError);
    expect(error.message).toMatch(/^rhs column 1's largest entry is 1e-250/);
  });
});
