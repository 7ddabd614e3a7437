/**
 * The federated regression generator: each machine's samples have the mean and spread its spec gives
 * (mean + skew d_i, scale s_i), the labels are A x_true plus noise of standard deviation sigma, and a
 * spec and seed give the same data bit for bit. Statistical checks allow 5 standard errors.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../../src/solvers/errors.js';
import { generateSystem, validateGeneratorSpec } from '../../../src/solvers/input/generators.js';
import { buildPartition, randomPartition } from '../../../src/solvers/input/partition.js';
import { regressionData } from '../../../src/solvers/input/regression.js';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/regression.json', import.meta.url), 'utf8')) as {
  job: { spec: { rows: number; n: number; skew: number; sigma: number; seed: number }; machines: number; sumA: number; sumB: number };
};

describe('regression data', () => {
  const spec = { rows: 4000, n: 20, machines: 4, mean: 0.5, skew: 3, scale: [1, 2, 0.5, 1], sigma: 0.1, seed: 7 };
  const data = regressionData(spec);
  const { A, b, xTrue, assignment, directions } = data;

  it('puts contiguous runs of rows on the machines, sizes within one', () => {
    expect(A.rows).toBe(4000);
    expect(A.cols).toBe(20);
    for (let k = 1; k < 4000; k++) expect(assignment[k]).toBeGreaterThanOrEqual(assignment[k - 1]);
    const sizes = [0, 0, 0, 0];
    for (const i of assignment) sizes[i]++;
    expect(sizes).toEqual([1000, 1000, 1000, 1000]);
    expect(regressionData({ rows: 10, n: 2, machines: 3 }).assignment).toEqual(Int32Array.from([0, 0, 0, 0, 1, 1, 1, 2, 2, 2]));
  });

  it("gives machine i's features the mean mean + skew d_i (d_i unit) and the scale s_i", () => {
    for (let i = 0; i < 4; i++) {
      let norm = 0;
      for (let j = 0; j < 20; j++) norm += directions[i * 20 + j] ** 2;
      expect(Math.sqrt(norm)).toBeCloseTo(1, 12);
      const s = spec.scale[i];
      for (let j = 0; j < 20; j++) {
        let sum = 0;
        let sum2 = 0;
        for (let k = i * 1000; k < (i + 1) * 1000; k++) sum += A.data[k * 20 + j];
        const average = sum / 1000;
        for (let k = i * 1000; k < (i + 1) * 1000; k++) sum2 += (A.data[k * 20 + j] - average) ** 2;
        expect(Math.abs(average - (0.5 + 3 * directions[i * 20 + j]))).toBeLessThan((5 * s) / Math.sqrt(1000));
        // The sample variance of 1000 normals has relative standard error sqrt(2 / 999).
        expect(Math.abs(sum2 / 999 / (s * s) - 1)).toBeLessThan(5 * Math.sqrt(2 / 999));
      }
    }
  });

  it('labels b = A x_true + noise of standard deviation sigma', () => {
    let sum2 = 0;
    for (let k = 0; k < 4000; k++) {
      let s = 0;
      for (let j = 0; j < 20; j++) s += A.data[k * 20 + j] * xTrue[j];
      sum2 += (b[k] - s) ** 2;
    }
    expect(Math.abs(Math.sqrt(sum2 / 4000) / 0.1 - 1)).toBeLessThan(5 / Math.sqrt(2 * 4000));
    const consistent = regressionData({ ...spec, sigma: 0 });
    for (let k = 0; k < 4000; k += 397) {
      let s = 0;
      for (let j = 0; j < 20; j++) s += consistent.A.data[k * 20 + j] * consistent.xTrue[j];
      expect(consistent.b[k]).toBe(s);
    }
  });

  it('is the same bit for bit for the same spec and seed, and differs for another seed', () => {
    const again = regressionData(spec);
    expect(again.A.data).toEqual(A.data);
    expect(again.b).toEqual(b);
    expect(regressionData({ ...spec, seed: 8 }).A.data[0]).not.toBe(A.data[0]);
  });

  it('skew 0 gives every machine the same distribution', () => {
    const plain = regressionData({ rows: 2000, n: 5, machines: 2, skew: 0, seed: 3 });
    for (let j = 0; j < 5; j++) {
      let s0 = 0;
      let s1 = 0;
      for (let k = 0; k < 1000; k++) s0 += plain.A.data[k * 5 + j];
      for (let k = 1000; k < 2000; k++) s1 += plain.A.data[k * 5 + j];
      expect(Math.abs(s0 / 1000 - s1 / 1000)).toBeLessThan(5 * Math.sqrt(2 / 1000));
    }
  });

  it('refuses a wide system, bad machine counts, negative skew or sigma, and scales of the wrong length', () => {
    expect(() => regressionData({ rows: 5, n: 6, machines: 1 })).toThrow(InvalidParameterError);
    expect(() => regressionData({ rows: 6, n: 6, machines: 7 })).toThrow(/machines/);
    expect(() => regressionData({ rows: 6, n: 6, machines: 2, skew: -1 })).toThrow(/skew/);
    expect(() => regressionData({ rows: 6, n: 6, machines: 2, sigma: -1 })).toThrow(/sigma/);
    expect(() => regressionData({ rows: 6, n: 6, machines: 2, scale: [1, 2, 3] })).toThrow(/scale/);
    expect(() => regressionData({ rows: 6, n: 6, machines: 2, scale: [1, 0] })).toThrow(/scale/);
  });

  it("draws machine i's rows for the rows a given assignment puts on it (a random partition's)", () => {
    const partition = randomPartition(3000, 3, 11);
    const skewed = regressionData({ rows: 3000, n: 4, machines: 3, skew: 5, seed: 2, assignment: partition.assignment });
    expect(skewed.assignment).toEqual(partition.assignment);
    for (let i = 0; i < 3; i++) {
      const rows = partition.rowsOf[i];
      for (let j = 0; j < 4; j++) {
        let sum = 0;
        for (const k of rows) sum += skewed.A.data[k * 4 + j];
        expect(Math.abs(sum / rows.length - 5 * skewed.directions[i * 4 + j])).toBeLessThan(5 / Math.sqrt(rows.length));
      }
    }
    expect(() => regressionData({ rows: 4, n: 2, machines: 2, assignment: Int32Array.from([0, 0, 0, 0]) })).toThrow(/every machine/);
    expect(() => regressionData({ rows: 4, n: 2, machines: 2, assignment: Int32Array.from([0, 1]) })).toThrow(/assignment/);
  });
});

describe('the regression generator of jobs', () => {
  it('generates over the partition the labels as b, x_true only without noise; its data is what NumPy checked', () => {
    const { spec, machines } = fixture.job;
    const partition = buildPartition({ machines }, spec.rows);
    const system = generateSystem({ ...spec, generator: 'regression' }, undefined, partition);
    expect(system.A.rows).toBe(400);
    expect(system.A.cols).toBe(20);
    // The data scripts/regressionReference.py solved (through scripts/regressionData.ts): same sums.
    expect(Math.abs(system.A.data.reduce((a, v) => a + v, 0) - fixture.job.sumA)).toBeLessThan(1e-9 * Math.abs(fixture.job.sumA));
    expect(Math.abs(system.b!.reduce((a, v) => a + v, 0) - fixture.job.sumB)).toBeLessThan(1e-9 * Math.abs(fixture.job.sumB));
    expect(system.xTrue).toBeNull();
    const exact = generateSystem({ ...spec, sigma: 0, generator: 'regression' }, undefined, partition);
    expect(exact.xTrue).toHaveLength(20);
    expect(exact.A.data).toEqual(system.A.data);
    // Other generators leave b to the caller (A * ones).
    expect(generateSystem({ generator: 'gaussian', n: 4 }).b).toBeNull();
  });

  it("checks rows >= n and the scales against the partition's machines", () => {
    expect(() => validateGeneratorSpec({ generator: 'regression', rows: 5, n: 6 })).toThrow(/rows/);
    const partition = buildPartition({ machines: 3 }, 30);
    expect(() => validateGeneratorSpec({ generator: 'regression', rows: 30, n: 3, scale: [1, 2] }, undefined, partition)).toThrow(/scale/);
    expect(validateGeneratorSpec({ generator: 'regression', rows: 30, n: 3, scale: [1, 2, 3] }, undefined, partition)).toMatchObject({
      rows: 30,
      n: 3,
      mean: 0,
      skew: 0,
      sigma: 0,
      seed: 1,
    });
    expect(() => validateGeneratorSpec({ generator: 'regression', rows: 2000, n: 3 }, { maxN: 1000 })).toThrow(/at most n = 1000/);
  });
});
