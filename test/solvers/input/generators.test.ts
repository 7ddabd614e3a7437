import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidParameterError, ProblemTooLargeError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { generateMatrix } from '../../../src/solvers/input/generators.js';
import { buildPartition } from '../../../src/solvers/input/partition.js';
import type { GeneratorSpec } from '../../../src/solvers/input/types.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import { FIXTURES_DIR } from '../../support/sharedData.js';
import { thrown } from '../../support/thrown.js';

const at = (a: DenseMatrix, i: number, j: number) => a.data[i * a.cols + j];

function meanAndStd(values: number[]): { mean: number; std: number } {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}

describe('generateMatrix: reproducibility', () => {
  // The seeded generators (ones-minus-eps takes no seed).
  const specs: Exclude<GeneratorSpec, { generator: 'ones-minus-eps' }>[] = [
    { generator: 'gaussian', n: 30, seed: 4 },
    { generator: 'block-diagonal', n: 30, blockSize: 7, seed: 4 },
    { generator: 'block-diagonal', n: 30, blockSize: 7, seed: 4, permute: true },
    { generator: 'structured-gaussian', n: 30, blockSize: 6, sigma: 0.3, seed: 4 },
  ];
  for (const spec of specs) {
    it(`${JSON.stringify(spec)}: same seed => bit-identical, other seed => different`, () => {
      const first = generateMatrix(spec);
      const again = generateMatrix({ ...spec });
      expect(first.rows).toBe(30);
      expect(first.cols).toBe(30);
      expect(Buffer.from(again.data.buffer).equals(Buffer.from(first.data.buffer))).toBe(true);
      const other = generateMatrix({ ...spec, seed: 5 });
      let differing = 0;
      let nonzero = 0;
      for (let k = 0; k < first.data.length; k++) {
        if (first.data[k] !== 0) nonzero++;
        if (first.data[k] !== other.data[k]) differing++;
      }
      // Every randomly drawn entry changes with the seed.
      expect(differing).toBeGreaterThanOrEqual(nonzero);
    });
  }

  it('is pinned across versions: a stored seed must keep producing the same matrix', () => {
    // Recorded from this implementation; if it changes, every job re-run from a seed changes too.
    expect(Array.from(generateMatrix({ generator: 'gaussian', n: 2, seed: 1 }).data)).toEqual([
      0.5130818709356634, 0.5294771684939564, 1.765866285566035, -0.9774896442440663,
    ]);
  });

  it('the default seed is 1, the default mean 0 and std 1', () => {
    const implicit = generateMatrix({ generator: 'gaussian', n: 10 });
    const explicit = generateMatrix({ generator: 'gaussian', n: 10, mean: 0, std: 1, seed: 1 });
    expect(Array.from(implicit.data)).toEqual(Array.from(explicit.data));
  });
});

describe('generateMatrix: distributions and structure', () => {
  it('gaussian: sample mean and std match (mean, std) within statistical tolerance', () => {
    const n = 400;
    const a = generateMatrix({ generator: 'gaussian', n, mean: 1, std: 2, seed: 9 });
    const { mean, std } = meanAndStd(Array.from(a.data));
    const count = n * n;
    // Standard errors: std / sqrt(N) for the mean, std / sqrt(2N) for the std.
    expect(Math.abs(mean - 1)).toBeLessThan((5 * 2) / Math.sqrt(count));
    expect(Math.abs(std - 2)).toBeLessThan((5 * 2) / Math.sqrt(2 * count));
  });

  it('block-diagonal: nonzero exactly inside the diagonal blocks, the last block takes the remainder', () => {
    const n = 23;
    const blockSize = 5; // blocks 0-4, 5-9, 10-14, 15-19, 20-22
    const a = generateMatrix({ generator: 'block-diagonal', n, blockSize, seed: 2 });
    const inside: number[] = [];
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const sameBlock = Math.floor(i / blockSize) === Math.floor(j / blockSize);
        if (sameBlock) {
          expect(at(a, i, j)).not.toBe(0);
          inside.push(at(a, i, j));
        } else {
          expect(at(a, i, j)).toBe(0);
        }
      }
    }
    expect(inside.length).toBe(4 * 25 + 9);
  });

  it('block-diagonal with permute: same rows up to a column shuffle, blocks keep disjoint column supports', () => {
    const n = 30;
    const blockSize = 10;
    const plain = generateMatrix({ generator: 'block-diagonal', n, blockSize, seed: 3 });
    const shuffled = generateMatrix({ generator: 'block-diagonal', n, blockSize, seed: 3, permute: true });
    const support = (i: number) => {
      const cols: number[] = [];
      for (let j = 0; j < n; j++) if (at(shuffled, i, j) !== 0) cols.push(j);
      return cols;
    };
    // No longer block diagonal...
    let outsideDiagonalBlocks = 0;
    for (let i = 0; i < n; i++)
      for (const j of support(i)) if (Math.floor(j / blockSize) !== Math.floor(i / blockSize)) outsideDiagonalBlocks++;
    expect(outsideDiagonalBlocks).toBeGreaterThan(0);
    // ...but rows of one block share one support of blockSize columns, disjoint from the other blocks'.
    const blockSupports: Set<number>[] = [];
    for (let b = 0; b < 3; b++) {
      const s = support(b * blockSize);
      expect(s.length).toBe(blockSize);
      for (let i = b * blockSize; i < (b + 1) * blockSize; i++) expect(support(i)).toEqual(s);
      blockSupports.push(new Set(s));
    }
    for (let b = 0; b < 3; b++)
      for (let c = b + 1; c < 3; c++) for (const j of blockSupports[b]) expect(blockSupports[c].has(j)).toBe(false);
    // Each row holds the same values as the unpermuted matrix (the permutation is drawn after the blocks).
    for (let i = 0; i < n; i++) {
      const row = (a: DenseMatrix) => Array.from(a.data.subarray(i * n, (i + 1) * n)).sort((x, y) => x - y);
      expect(row(shuffled)).toEqual(row(plain));
    }
  });

  it('block-diagonal without blockSize: one block per machine of the partition, over a run of p_i columns, rows where the machine holds them', () => {
    const n = 12;
    // Scattered rows: machine 0 holds rows 0, 3, 6, 9, 10, 11; machine 1 rows 1, 4, 7; machine 2 rows 2, 5, 8.
    const partition = buildPartition({ assignment: [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0] }, n);
    const a = generateMatrix({ generator: 'block-diagonal', n, seed: 5 }, undefined, partition);
    const firstColumn = [0, 6, 9, 12]; // prefix sums of the machines' sizes 6, 3, 3
    for (let k = 0; k < n; k++) {
      const machine = partition.assignment[k];
      for (let j = 0; j < n; j++) {
        const inBlock = j >= firstColumn[machine] && j < firstColumn[machine + 1];
        if (inBlock) expect(at(a, k, j), `(${k}, ${j})`).not.toBe(0);
        else expect(at(a, k, j), `(${k}, ${j})`).toBe(0);
      }
    }
  });

  it('block-diagonal without blockSize, contiguous machines: the same matrix as the blockSize that matches them', () => {
    const aligned = generateMatrix(
      { generator: 'block-diagonal', n: 30, seed: 8, permute: true },
      undefined,
      buildPartition({ machines: 3 }, 30),
    );
    const sized = generateMatrix({ generator: 'block-diagonal', n: 30, blockSize: 10, seed: 8, permute: true });
    expect(Array.from(aligned.data)).toEqual(Array.from(sized.data));
  });

  it('block-diagonal without blockSize needs a partition of its n rows', () => {
    const missing = thrown(() => generateMatrix({ generator: 'block-diagonal', n: 6, seed: 1 }));
    expect(missing).toBeInstanceOf(InvalidParameterError);
    expect(missing.message).toMatch(/without blockSize .* needs the partition/);
    const wrongSize = thrown(() =>
      generateMatrix({ generator: 'block-diagonal', n: 6, seed: 1 }, undefined, buildPartition({ machines: 2 }, 5)),
    );
    expect(wrongSize).toBeInstanceOf(DimensionMismatchError);
    expect(wrongSize.message).toMatch(/assigns 5 rows .* n = 6/);
  });

  it('structured-gaussian: diagonal blocks spread ~1, off-diagonal blocks spread ~sigma', () => {
    const n = 240;
    const blockSize = 60;
    const sigma = 0.1;
    const a = generateMatrix({ generator: 'structured-gaussian', n, blockSize, sigma, seed: 6 });
    const diagonal: number[] = [];
    const offDiagonal: number[] = [];
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        (Math.floor(i / blockSize) === Math.floor(j / blockSize) ? diagonal : offDiagonal).push(at(a, i, j));
      }
    }
    const d = meanAndStd(diagonal);
    const o = meanAndStd(offDiagonal);
    expect(Math.abs(d.mean)).toBeLessThan(5 / Math.sqrt(diagonal.length));
    expect(Math.abs(d.std - 1)).toBeLessThan(5 / Math.sqrt(2 * diagonal.length));
    expect(Math.abs(o.mean)).toBeLessThan((5 * sigma) / Math.sqrt(offDiagonal.length));
    expect(Math.abs(o.std - sigma)).toBeLessThan((5 * sigma) / Math.sqrt(2 * offDiagonal.length));
  });

  it('structured-gaussian with sigma = 0 is block diagonal', () => {
    const a = generateMatrix({ generator: 'structured-gaussian', n: 12, blockSize: 4, sigma: 0, seed: 1 });
    for (let i = 0; i < 12; i++) for (let j = 0; j < 12; j++) expect(at(a, i, j) === 0).toBe(Math.floor(i / 4) !== Math.floor(j / 4));
  });

  it('ones-minus-eps: exact entries 1 - eps on the diagonal and 1 elsewhere', () => {
    const a = generateMatrix({ generator: 'ones-minus-eps', n: 4, eps: 0.25 });
    expect(Array.from(a.data)).toEqual([0.75, 1, 1, 1, 1, 0.75, 1, 1, 1, 1, 0.75, 1, 1, 1, 1, 0.75]);
  });

  it('ones-minus-eps matches the fixture matrix of ones-minus-eps-n20-eps0.1-m4 exactly', () => {
    const fixture = JSON.parse(readFileSync(join(FIXTURES_DIR, 'ones-minus-eps-n20-eps0.1-m4.json'), 'utf8')) as { A: number[][] };
    const a = generateMatrix({ generator: 'ones-minus-eps', n: 20, eps: 0.1 });
    expect(Array.from(a.data)).toEqual(fixture.A.flat());
  });
});

describe('generateMatrix: invalid and singular specs', () => {
  it('ones-minus-eps is singular at eps = 0 and eps = n, and numerically singular for a tiny eps', () => {
    const zero = thrown(() => generateMatrix({ generator: 'ones-minus-eps', n: 5, eps: 0 }));
    expect(zero).toBeInstanceOf(SingularMatrixError);
    expect(zero.message).toMatch(/eps = 0/);
    expect(zero.message).toMatch(/rank 1/);
    const atN = thrown(() => generateMatrix({ generator: 'ones-minus-eps', n: 5, eps: 5 }));
    expect(atN).toBeInstanceOf(SingularMatrixError);
    expect(atN.message).toMatch(/eps = n = 5/);
    expect(() => generateMatrix({ generator: 'ones-minus-eps', n: 5, eps: 1e-20 })).toThrow(/numerically singular/);
    // n = 1: A = [1 - eps], singular only at eps = 1.
    expect(Array.from(generateMatrix({ generator: 'ones-minus-eps', n: 1, eps: 0 }).data)).toEqual([1]);
    expect(() => generateMatrix({ generator: 'ones-minus-eps', n: 1, eps: 1 })).toThrow(SingularMatrixError);
    // Negative and large eps are fine.
    expect(generateMatrix({ generator: 'ones-minus-eps', n: 3, eps: -2 }).data[0]).toBe(3);
  });

  it('gaussian with std = 0 is a rank-one (or zero) matrix: singular', () => {
    expect(() => generateMatrix({ generator: 'gaussian', n: 3, mean: 2, std: 0 })).toThrow(SingularMatrixError);
    expect(Array.from(generateMatrix({ generator: 'gaussian', n: 1, mean: 2, std: 0 }).data)).toEqual([2]);
  });

  it('rejects bad parameters with InvalidParameterError naming the parameter', () => {
    const cases: [unknown, RegExp][] = [
      [{ generator: 'gaussian', n: 0 }, /n must be an integer >= 1; got number 0/],
      [{ generator: 'gaussian', n: 2.5 }, /n must be an integer/],
      [{ generator: 'gaussian', n: '4' }, /n must be an integer.*string "4"/],
      [{ generator: 'gaussian', n: 4, std: -1 }, /std must be >= 0/],
      [{ generator: 'gaussian', n: 4, mean: Number.NaN }, /mean must be a finite number/],
      [{ generator: 'gaussian', n: 4, seed: 0.5 }, /seed must be an integer/],
      [{ generator: 'block-diagonal', n: 4, blockSize: 0 }, /blockSize must be an integer between 1 and n = 4/],
      [{ generator: 'block-diagonal', n: 4, blockSize: 5 }, /blockSize/],
      [{ generator: 'block-diagonal', n: 4, blockSize: 2, permute: 'yes' }, /permute must be true or false/],
      [{ generator: 'structured-gaussian', n: 4, blockSize: 2, sigma: -0.1 }, /sigma must be >= 0/],
      [{ generator: 'structured-gaussian', n: 4, blockSize: 2 }, /sigma must be a finite number; got missing/],
      [{ generator: 'ones-minus-eps', n: 4, eps: Number.POSITIVE_INFINITY }, /eps must be a finite number/],
      [{ generator: 'hilbert', n: 4 }, /Unknown generator "hilbert"/],
    ];
    for (const [spec, pattern] of cases) {
      const error = thrown(() => generateMatrix(spec as GeneratorSpec));
      expect(error, JSON.stringify(spec)).toBeInstanceOf(InvalidParameterError);
      expect(error.message, JSON.stringify(spec)).toMatch(pattern);
    }
  });

  it('checks n against limits.maxN before allocating', () => {
    const error = thrown(() => generateMatrix({ generator: 'gaussian', n: 100_000 }, { maxN: 4000 }));
    expect(error).toBeInstanceOf(ProblemTooLargeError);
    expect(error.message).toMatch(/n = 100000.*n = 4000/);
  });
});
