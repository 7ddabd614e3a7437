import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/solvers/errors.js';
import { SeededRandom } from '../../src/solvers/random.js';

describe('SeededRandom', () => {
  it('reproduces the xoshiro128** reference implementation (test data of edorfaus/xoshiro-6502, generated with the C reference)', () => {
    const rng = SeededRandom.fromState([0x964d4a0c, 0xd40ab895, 0xad7fdecb, 0x3006f0f0]);
    expect([rng.nextUint32(), rng.nextUint32(), rng.nextUint32(), rng.nextUint32()]).toEqual([
      0xf1391922, 0x6fe53806, 0xa5be2840, 0xf510ee70,
    ]);
  });

  it('is deterministic for a seed and differs between seeds, including nearby and large ones', () => {
    const draw = (seed: number) => {
      const rng = new SeededRandom(seed);
      return Array.from({ length: 8 }, () => rng.nextUint32());
    };
    expect(draw(7)).toEqual(draw(7));
    const seeds = [0, 1, 2, -1, 2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    const streams = new Set(seeds.map((s) => draw(s).join(',')));
    expect(streams.size).toBe(seeds.length);
  });

  it('rejects non-integer seeds', () => {
    expect(() => new SeededRandom(1.5)).toThrow(InvalidParameterError);
    expect(() => new SeededRandom(Number.NaN)).toThrow(/seed/);
    expect(() => new SeededRandom(2 ** 60)).toThrow(InvalidParameterError);
  });

  it('draws uniform doubles in [0, 1) with the right mean and variance', () => {
    const rng = new SeededRandom(3);
    const count = 100_000;
    let sum = 0;
    let sumSq = 0;
    let outOfRange = 0;
    for (let k = 0; k < count; k++) {
      const u = rng.nextDouble();
      if (!(u >= 0 && u < 1)) outOfRange++;
      sum += u;
      sumSq += u * u;
    }
    expect(outOfRange).toBe(0);
    const mean = sum / count;
    // Standard error of the mean is sqrt(1/12 / N) ~ 9e-4; allow 5 of them.
    expect(Math.abs(mean - 0.5)).toBeLessThan(5 * Math.sqrt(1 / 12 / count));
    expect(Math.abs(sumSq / count - mean * mean - 1 / 12)).toBeLessThan(2e-3);
  });

  it('draws standard normals: mean 0, variance 1, 68.27% within one sigma', () => {
    const rng = new SeededRandom(11);
    const count = 200_000;
    let sum = 0;
    let sumSq = 0;
    let withinOne = 0;
    for (let k = 0; k < count; k++) {
      const z = rng.nextNormal();
      sum += z;
      sumSq += z * z;
      if (Math.abs(z) < 1) withinOne++;
    }
    const mean = sum / count;
    const variance = sumSq / count - mean * mean;
    expect(Math.abs(mean)).toBeLessThan(5 / Math.sqrt(count));
    // Var of the sample variance of normals is 2/N.
    expect(Math.abs(variance - 1)).toBeLessThan(5 * Math.sqrt(2 / count));
    const p = 0.682689492137;
    expect(Math.abs(withinOne / count - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / count));
  });

  it('nextInt stays in range and covers it evenly; permutation is a permutation', () => {
    const rng = new SeededRandom(5);
    const counts = new Array<number>(6).fill(0);
    for (let k = 0; k < 60_000; k++) counts[rng.nextInt(6)]++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
    const perm = rng.permutation(50);
    expect(Array.from(perm).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, k) => k));
    expect(Array.from(perm)).not.toEqual(Array.from({ length: 50 }, (_, k) => k));
  });
});
