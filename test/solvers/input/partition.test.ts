import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EmptyMachineError,
  InvalidPartitionError,
  RowAssignedTwiceError,
  RowUnassignedError,
  TooManyMachinesError,
} from '../../../src/solvers/errors.js';
import { buildPartition, randomPartition } from '../../../src/solvers/input/partition.js';
import type { PartitionInput } from '../../../src/solvers/input/types.js';
import type { Partition } from '../../../src/solvers/problem.js';
import { planStudy } from '../../../src/solvers/studies/plan.js';
import { partitionSeed, samplePartition } from '../../../src/solvers/studies/sampler.js';
import { FIXTURES_DIR } from '../../support/sharedData.js';
import { thrown } from '../../support/thrown.js';

const fixtureAssignment = (name: string): number[] =>
  (JSON.parse(readFileSync(join(FIXTURES_DIR, `${name}.json`), 'utf8')) as { partition: { assignment: number[] } }).partition.assignment;

/** The Partition's views agree with its assignment. */
function expectConsistent(p: Partition, n: number): void {
  expect(p.assignment.length).toBe(n);
  expect(p.rowsOf.length).toBe(p.m);
  expect(p.sizes.reduce((s, v) => s + v, 0)).toBe(n);
  for (let i = 0; i < p.m; i++) {
    expect(p.sizes[i]).toBeGreaterThan(0);
    expect(p.rowsOf[i].length).toBe(p.sizes[i]);
    for (const row of p.rowsOf[i]) expect(p.assignment[row]).toBe(i);
  }
}

/** randomPartition(8, 3, 1), as the studies drew it before the routine moved here. */
const PINNED_8_3_1 = [0, 1, 1, 0, 2, 2, 0, 1];

describe('buildPartition: { machines }', () => {
  it('n = 62, m = 2 reproduces the assignment of fixture bfwa62-m2', () => {
    const p = buildPartition({ machines: 2 }, 62);
    expect(Array.from(p.assignment)).toEqual(fixtureAssignment('bfwa62-m2'));
    expectConsistent(p, 62);
  });

  it('n = 62, m = 4 reproduces bfwa62-m4 (16, 16, 15, 15: larger blocks first)', () => {
    const p = buildPartition({ machines: 4 }, 62);
    expect(Array.from(p.assignment)).toEqual(fixtureAssignment('bfwa62-m4'));
    expect(p.sizes).toEqual([16, 16, 15, 15]);
  });

  it('matches the other contiguous fixtures (sherman5-m8, gr_30_30-m10, bcsstk03-m4)', () => {
    expect(Array.from(buildPartition({ machines: 8 }, 3312).assignment)).toEqual(fixtureAssignment('sherman5-m8'));
    expect(Array.from(buildPartition({ machines: 10 }, 900).assignment)).toEqual(fixtureAssignment('gr_30_30-m10'));
    expect(Array.from(buildPartition({ machines: 4 }, 112).assignment)).toEqual(fixtureAssignment('bcsstk03-m4'));
  });

  it('uneven splits follow numpy.array_split', () => {
    // np.array_split(np.arange(n), m) block lengths.
    expect(buildPartition({ machines: 3 }, 10).sizes).toEqual([4, 3, 3]);
    expect(buildPartition({ machines: 4 }, 10).sizes).toEqual([3, 3, 2, 2]);
    expect(buildPartition({ machines: 7 }, 10).sizes).toEqual([2, 2, 2, 1, 1, 1, 1]);
    expect(buildPartition({ machines: 5 }, 5).sizes).toEqual([1, 1, 1, 1, 1]);
    expect(buildPartition({ machines: 1 }, 5).sizes).toEqual([5]);
    const p = buildPartition({ machines: 3 }, 10);
    expect(Array.from(p.assignment)).toEqual([0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
    expect(Array.from(p.rowsOf[1])).toEqual([4, 5, 6]);
  });

  it('m > n, m above maxMachines, m < 1 and non-integers are rejected', () => {
    const tooMany = thrown(() => buildPartition({ machines: 7 }, 5));
    expect(tooMany).toBeInstanceOf(TooManyMachinesError);
    expect(tooMany.message).toMatch(/7 machines requested, at most 5 allowed/);
    expect(tooMany.message).toMatch(/each machine needs at least one row/);
    const overLimit = thrown(() => buildPartition({ machines: 20 }, 100, { maxMachines: 16 }));
    expect(overLimit).toBeInstanceOf(TooManyMachinesError);
    expect(overLimit.message).toMatch(/20 machines requested, at most 16 allowed/);
    // More than both: the lower limit is named (it said "at most 300000" for 300,000 rows, and 2000 then met the other).
    const overBoth = thrown(() => buildPartition({ machines: 400 }, 300, { maxMachines: 16 }));
    expect(overBoth.message).toMatch(/400 machines requested, at most 16 allowed: the service limit on machines/);
    expect((overBoth as TooManyMachinesError).details).toMatchObject({ machines: 400, limit: 16 });
    expect(() => buildPartition({ machines: 0 }, 5)).toThrow(InvalidPartitionError);
    expect(() => buildPartition({ machines: -2 }, 5)).toThrow(/machines must be an integer >= 1/);
    expect(() => buildPartition({ machines: 2.5 }, 5)).toThrow(/machines must be an integer >= 1; got number 2.5/);
  });
});

describe('buildPartition: { sizes }', () => {
  it('contiguous blocks of the given sizes', () => {
    const p = buildPartition({ sizes: [3, 5, 2] }, 10);
    expect(Array.from(p.assignment)).toEqual([0, 0, 0, 1, 1, 1, 1, 1, 2, 2]);
    expect(p.sizes).toEqual([3, 5, 2]);
    expectConsistent(p, 10);
    expect(Array.from(buildPartition({ sizes: [3, 5, 19] }, 27).assignment)).toEqual(fixtureAssignment('uneven-n27'));
  });

  it('sizes must be positive integers summing to n; zero is an empty machine', () => {
    const wrongSum = thrown(() => buildPartition({ sizes: [3, 5] }, 10));
    expect(wrongSum).toBeInstanceOf(InvalidPartitionError);
    expect(wrongSum.message).toMatch(/sum to 8 but the matrix has n = 10/);
    const empty = thrown(() => buildPartition({ sizes: [5, 0, 5] }, 10));
    expect(empty).toBeInstanceOf(EmptyMachineError);
    expect(empty.message).toMatch(/Machine 1 holds no rows/);
    expect(() => buildPartition({ sizes: [5, -1, 6] }, 10)).toThrow(/sizes\[1\]/);
    expect(() => buildPartition({ sizes: [5, 2.5, 2.5] }, 10)).toThrow(InvalidPartitionError);
    expect(() => buildPartition({ sizes: [] }, 10)).toThrow(InvalidPartitionError);
    expect(() => buildPartition({ sizes: [1, 1, 1] }, 3, { maxMachines: 2 })).toThrow(TooManyMachinesError);
  });
});

describe('buildPartition: { assignment }', () => {
  it('any row-to-machine map, e.g. round-robin (fixture round-robin-scaled-n30-m3)', () => {
    const assignment = fixtureAssignment('round-robin-scaled-n30-m3');
    const p = buildPartition({ assignment }, 30);
    expect(p.m).toBe(3);
    expect(Array.from(p.assignment)).toEqual(assignment);
    expect(Array.from(p.rowsOf[1])).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
    expectConsistent(p, 30);
    const scattered = fixtureAssignment('block-diagonal-permuted-n30-m3');
    expectConsistent(buildPartition({ assignment: scattered }, 30), 30);
  });

  it('too short: the first row without a machine; too long: InvalidPartitionError', () => {
    const short = thrown(() => buildPartition({ assignment: [0, 1, 0] }, 5));
    expect(short).toBeInstanceOf(RowUnassignedError);
    expect(short.message).toMatch(/Row 3 is assigned to no machine/);
    const long = thrown(() => buildPartition({ assignment: [0, 1, 0, 1, 0, 1] }, 5));
    expect(long).toBeInstanceOf(InvalidPartitionError);
    expect(long).not.toBeInstanceOf(RowUnassignedError);
    expect(long.message).toMatch(/6 entries but the matrix has n = 5/);
  });

  it('a machine below the largest index with no row is named', () => {
    const error = thrown(() => buildPartition({ assignment: [0, 2, 0, 2, 3] }, 5));
    expect(error).toBeInstanceOf(EmptyMachineError);
    expect(error.message).toMatch(/Machine 1 holds no rows/);
    expect((error as EmptyMachineError).details).toEqual({ machine: 1 });
  });

  it('negative or non-integer machine indices, and too many machines', () => {
    expect(thrown(() => buildPartition({ assignment: [0, -1, 0] }, 3)).message).toMatch(
      /assignment\[1\] \(the machine of row 1\) is number -1/,
    );
    expect(() => buildPartition({ assignment: [0, 1.5, 0] }, 3)).toThrow(InvalidPartitionError);
    expect(() => buildPartition({ assignment: [0, '1', 0] as unknown as number[] }, 3)).toThrow(/string "1"/);
    const huge = thrown(() => buildPartition({ assignment: [0, 1e9, 0] }, 3));
    expect(huge).toBeInstanceOf(TooManyMachinesError);
    expect(() => buildPartition({ assignment: [0, 1, 2, 3] }, 4, { maxMachines: 3 })).toThrow(TooManyMachinesError);
  });
});

describe('buildPartition: { groups }', () => {
  it('rows listed per machine, in any order', () => {
    const p = buildPartition({ groups: [[4, 0], [1, 3], [2]] }, 5);
    expect(Array.from(p.assignment)).toEqual([0, 1, 2, 1, 0]);
    expect(Array.from(p.rowsOf[0])).toEqual([0, 4]);
    expectConsistent(p, 5);
  });

  it('a row in two groups names the row and both machines', () => {
    const error = thrown(() =>
      buildPartition(
        {
          groups: [
            [0, 1],
            [2, 3],
            [4, 1],
          ],
        },
        5,
      ),
    );
    expect(error).toBeInstanceOf(RowAssignedTwiceError);
    expect(error.message).toMatch(/Row 1 is assigned to machines 0 and 2/);
    expect((error as RowAssignedTwiceError).details).toEqual({ row: 1, machines: [0, 2] });
  });

  it('a row in no group names the first one; an empty group names the machine', () => {
    const unassigned = thrown(() => buildPartition({ groups: [[0, 4], [1]] }, 5));
    expect(unassigned).toBeInstanceOf(RowUnassignedError);
    expect(unassigned.message).toMatch(/Row 2 is assigned to no machine/);
    const empty = thrown(() => buildPartition({ groups: [[0, 1, 2], [], [3, 4]] }, 5));
    expect(empty).toBeInstanceOf(EmptyMachineError);
    expect(empty.message).toMatch(/Machine 1/);
  });

  it('rows out of range, too many groups', () => {
    expect(() => buildPartition({ groups: [[0, 1], [5]] }, 5)).toThrow(/groups\[1\] contains number 5; rows are integers in 0\.\.4/);
    expect(() => buildPartition({ groups: [[0], [1], [2]] }, 2)).toThrow(TooManyMachinesError);
  });
});

describe('buildPartition: the form itself', () => {
  it('exactly one of machines, sizes, assignment, groups', () => {
    expect(() => buildPartition({} as PartitionInput, 5)).toThrow(/none was given/);
    expect(() => buildPartition({ machines: 2, sizes: [2, 3] }, 5)).toThrow(/got machines and sizes/);
    expect(() => buildPartition(null as unknown as PartitionInput, 5)).toThrow(InvalidPartitionError);
    expect(() => buildPartition({ machines: 1 }, 0)).toThrow(InvalidPartitionError);
  });
});

describe("buildPartition: { family: 'random', seed, machines }", () => {
  it('the block sizes of { machines }, rows dealt by the seed; same seed, same partition', () => {
    const p = buildPartition({ family: 'random', seed: 42, machines: 4 }, 62);
    expectConsistent(p, 62);
    expect(Array.from(p.sizes)).toEqual(Array.from(buildPartition({ machines: 4 }, 62).sizes));
    expect(Array.from(buildPartition({ family: 'random', seed: 42, machines: 4 }, 62).assignment)).toEqual(Array.from(p.assignment));
    expect(Array.from(randomPartition(62, 4, 42).assignment)).toEqual(Array.from(p.assignment));
    expect(Array.from(randomPartition(62, 4, 43).assignment)).not.toEqual(Array.from(p.assignment));
    // Not the contiguous blocks.
    expect(Array.from(p.assignment)).not.toEqual(Array.from(buildPartition({ machines: 4 }, 62).assignment));
  });

  it('pinned: a change of the routine would break the replay of stored studies', () => {
    expect(Array.from(randomPartition(8, 3, 1).assignment)).toEqual(PINNED_8_3_1);
  });

  it('each machine owns a row even at m = n; a seed of 2^53 - 1 works', () => {
    const p = randomPartition(7, 7, Number.MAX_SAFE_INTEGER);
    expectConsistent(p, 7);
    expect([...p.sizes]).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it('refuses a bad seed, too many machines, other keys', () => {
    expect(() => buildPartition({ family: 'random', seed: 1.5, machines: 2 }, 5)).toThrow(/seed must be an integer/);
    expect(() => buildPartition({ family: 'random', seed: 1, machines: 6 }, 5)).toThrow(TooManyMachinesError);
    expect(() => buildPartition({ family: 'random', seed: 1, machines: 2 }, 5, { maxMachines: 1 })).toThrow(TooManyMachinesError);
    const extra = { family: 'random', seed: 1, machines: 2, sizes: [2, 3] } as unknown as PartitionInput;
    expect(() => buildPartition(extra, 5)).toThrow(/family, seed and machines only; got sizes/);
    expect(() => buildPartition({ family: 'other', seed: 1, machines: 2 } as unknown as PartitionInput, 5)).toThrow(
      /family must be 'random'/,
    );
  });

  it("is the study sampler's random partition: a sample's partition replays from its seed", () => {
    const { definition, points } = planStudy(
      { grid: { m: [3, 5] }, settings: { n: 40 }, partition: { family: 'random', seed: 7 }, samples: 4, metrics: ['conditioning.kappaS'] },
      { maxSamples: 1000, maxPointSamples: 100, maxPoints: 10, maxN: 100 },
    );
    for (const point of points) {
      for (let sample = 0; sample < 4; sample++) {
        const seed = partitionSeed(definition, point, sample);
        const replayed = buildPartition({ family: 'random', seed, machines: point.settings.m }, 40);
        expect(Array.from(replayed.assignment)).toEqual(Array.from(samplePartition(definition, point, sample).assignment));
      }
    }
  });
});
