/**
 * PartitionInput -> Partition of the n rows over m machines. Every form ends in an assignment
 * array (row -> machine) checked to cover 0..m-1, then partitionFromAssignment builds the view.
 * Check order: the form, then m against n and limits.maxMachines (before anything of size m is
 * allocated), then coverage (empty machines, rows assigned twice or never).
 *
 * The random form { family: 'random', seed, machines } is randomPartition below: the one routine
 * that studies (src/solvers/studies/sampler.ts) draw their random partitions with, so a sample's
 * partition is replayed exactly by a job given its seed.
 */
import { EmptyMachineError, InvalidPartitionError, RowAssignedTwiceError, RowUnassignedError, TooManyMachinesError } from '../errors.js';
import { partitionFromAssignment, type Partition } from '../problem.js';
import { SeededRandom } from '../random.js';
import { describeValue } from './entries.js';
import type { InputLimits, PartitionInput } from './types.js';

const FORMS = ['machines', 'sizes', 'assignment', 'groups'] as const;
const FORM_LIST = 'machines, sizes, assignment, groups or family (random)';

export function buildPartition(input: PartitionInput, n: number, limits?: InputLimits): Partition {
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidPartitionError(`Cannot partition ${describeValue(n)} rows; n must be an integer >= 1.`, { n });
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidPartitionError(
      `A partition must be one of { machines }, { sizes }, { assignment }, { groups }, { family: 'random', seed, machines }; got ${describeValue(input)}.`,
    );
  }
  if ('family' in input) return fromFamily(input, n, limits);
  const present = FORMS.filter((form) => (input as Record<string, unknown>)[form] !== undefined);
  if (present.length !== 1) {
    throw new InvalidPartitionError(
      present.length === 0
        ? `A partition must give exactly one of ${FORM_LIST}; none was given.`
        : `A partition must give exactly one of ${FORM_LIST}; got ${present.join(' and ')}.`,
      { forms: present },
    );
  }
  if ('machines' in input && input.machines !== undefined) return fromMachines(input.machines, n, limits);
  if ('sizes' in input && input.sizes !== undefined) return fromSizes(input.sizes, n, limits);
  if ('assignment' in input && input.assignment !== undefined) return fromAssignment(input.assignment, n, limits);
  return fromGroups((input as { groups: number[][] }).groups, n, limits);
}

/** { family: 'random', seed, machines }: nothing else beside them. */
function fromFamily(input: Record<string, unknown>, n: number, limits: InputLimits | undefined): Partition {
  const { family, seed, machines, ...others } = input;
  if (family !== 'random')
    throw new InvalidPartitionError(`family must be 'random'; got ${describeValue(family)}.`, { parameter: 'family' });
  const extra = Object.keys(others);
  if (extra.length > 0)
    throw new InvalidPartitionError(`A random partition takes family, seed and machines only; got ${extra.join(', ')} too.`, {
      forms: extra,
    });
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw new InvalidPartitionError(`seed must be an integer (at most 2^53 - 1 in magnitude); got ${describeValue(seed)}.`, {
      parameter: 'seed',
    });
  }
  return randomPartition(n, machineCount(machines, n, limits), seed);
}

/**
 * A seeded random partition of n rows over m machines: the block sizes of { machines: m } (NumPy's
 * array_split, so each machine owns at least one row when m <= n), the rows dealt to them in the
 * order of a Fisher-Yates permutation drawn from SeededRandom(seed): machine of row order[k] = the
 * contiguous block of position k. Same (n, m, seed), same partition, on every platform.
 */
export function randomPartition(n: number, m: number, seed: number): Partition {
  const contiguous = contiguousAssignment(n, m);
  const order = new SeededRandom(seed).permutation(n);
  const assignment = new Int32Array(n);
  for (let k = 0; k < n; k++) assignment[order[k]] = contiguous[k];
  return partitionFromAssignment(assignment, m);
}

/** NumPy's array_split: n = q m + r, the first r blocks get q + 1 rows, the others q. */
function fromMachines(machines: unknown, n: number, limits: InputLimits | undefined): Partition {
  const m = machineCount(machines, n, limits);
  return partitionFromAssignment(contiguousAssignment(n, m), m);
}

function machineCount(machines: unknown, n: number, limits: InputLimits | undefined): number {
  if (typeof machines !== 'number' || !Number.isInteger(machines) || machines < 1) {
    throw new InvalidPartitionError(`machines must be an integer >= 1; got ${describeValue(machines)}.`, {
      machines: describeValue(machines),
    });
  }
  checkMachineCount(machines, n, limits);
  return machines;
}

/** assignment[k] = machine of row k for m contiguous blocks (NumPy's array_split), the first n mod m one row larger. */
export function contiguousAssignment(n: number, m: number): Int32Array {
  const q = Math.floor(n / m);
  const r = n - q * m;
  const assignment = new Int32Array(n);
  let row = 0;
  for (let i = 0; i < m; i++) {
    const size = i < r ? q + 1 : q;
    assignment.fill(i, row, row + size);
    row += size;
  }
  return assignment;
}

/** Contiguous blocks of the given sizes, in order. */
function fromSizes(sizes: unknown, n: number, limits: InputLimits | undefined): Partition {
  if (!Array.isArray(sizes) || sizes.length === 0) {
    throw new InvalidPartitionError(`sizes must be a non-empty array of positive integers; got ${describeValue(sizes)}.`);
  }
  const m = sizes.length;
  const blockSizes = new Int32Array(m);
  let sum = 0;
  for (let i = 0; i < m; i++) {
    const size: unknown = sizes[i];
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
      throw new InvalidPartitionError(`sizes[${i}] is ${describeValue(size)}; block sizes must be positive integers.`, { machine: i });
    }
    if (size === 0) throw new EmptyMachineError(i);
    blockSizes[i] = size;
    sum += size;
  }
  if (sum !== n) {
    throw new InvalidPartitionError(`The block sizes sum to ${sum} but the matrix has n = ${n} rows; they must sum to n.`, { sum, n });
  }
  // Positive sizes summing to n already imply m <= n; the service limit still applies.
  checkMachineCount(m, n, limits);
  const assignment = new Int32Array(n);
  let row = 0;
  for (let i = 0; i < m; i++) {
    assignment.fill(i, row, row + blockSizes[i]);
    row += blockSizes[i];
  }
  return partitionFromAssignment(assignment, m);
}

/** assignment[k] = machine of row k; m = max + 1 and each of 0..m-1 must own a row. */
function fromAssignment(assignmentInput: unknown, n: number, limits: InputLimits | undefined): Partition {
  if (!Array.isArray(assignmentInput)) {
    throw new InvalidPartitionError(`assignment must be an array of machine indices, one per row; got ${describeValue(assignmentInput)}.`);
  }
  if (assignmentInput.length < n) throw new RowUnassignedError(assignmentInput.length);
  if (assignmentInput.length > n) {
    throw new InvalidPartitionError(
      `assignment has ${assignmentInput.length} entries but the matrix has n = ${n} rows; it needs exactly one machine per row.`,
      {
        length: assignmentInput.length,
        n,
      },
    );
  }
  let maxMachine = -1;
  for (let k = 0; k < n; k++) {
    const machine: unknown = assignmentInput[k];
    if (typeof machine !== 'number' || !Number.isInteger(machine) || machine < 0) {
      throw new InvalidPartitionError(
        `assignment[${k}] (the machine of row ${k}) is ${describeValue(machine)}; machine indices are integers >= 0.`,
        { row: k },
      );
    }
    if (machine > maxMachine) maxMachine = machine;
  }
  const m = maxMachine + 1;
  checkMachineCount(m, n, limits);
  const assignment = Int32Array.from(assignmentInput as number[]);
  const owned = new Uint8Array(m);
  for (let k = 0; k < n; k++) owned[assignment[k]] = 1;
  const empty = owned.indexOf(0);
  if (empty !== -1) throw new EmptyMachineError(empty);
  return partitionFromAssignment(assignment, m);
}

/** groups[i] = the rows of machine i; every row in 0..n-1 exactly once. */
function fromGroups(groups: unknown, n: number, limits: InputLimits | undefined): Partition {
  if (!Array.isArray(groups) || groups.length === 0) {
    throw new InvalidPartitionError(`groups must be a non-empty array of row lists, one per machine; got ${describeValue(groups)}.`);
  }
  const m = groups.length;
  checkMachineCount(m, n, limits);
  const assignment = new Int32Array(n).fill(-1);
  for (let i = 0; i < m; i++) {
    const group: unknown = groups[i];
    if (!Array.isArray(group))
      throw new InvalidPartitionError(`groups[${i}] is ${describeValue(group)}; each group must be an array of row indices.`, {
        machine: i,
      });
    if (group.length === 0) throw new EmptyMachineError(i);
    for (const row of group as unknown[]) {
      if (typeof row !== 'number' || !Number.isInteger(row) || row < 0 || row >= n) {
        throw new InvalidPartitionError(`groups[${i}] contains ${describeValue(row)}; rows are integers in 0..${n - 1}.`, { machine: i });
      }
      if (assignment[row] !== -1) throw new RowAssignedTwiceError(row, [assignment[row], i]);
      assignment[row] = i;
    }
  }
  const unassigned = assignment.indexOf(-1);
  if (unassigned !== -1) throw new RowUnassignedError(unassigned);
  return partitionFromAssignment(assignment, m);
}

/** m against both limits, the message naming the lower one (a user told "at most n" then tried n and met the other). */
function checkMachineCount(m: number, n: number, limits: InputLimits | undefined): void {
  const maxMachines = limits?.maxMachines ?? Number.POSITIVE_INFINITY;
  if (m <= n && m <= maxMachines) return;
  if (n <= maxMachines) throw new TooManyMachinesError(m, n, `the matrix has n = ${n} rows and each machine needs at least one row`);
  throw new TooManyMachinesError(
    m,
    maxMachines,
    `the service limit on machines (maxMachines)${m > n ? `, below the matrix's n = ${n} rows` : ''}`,
  );
}

/** Check a ready-made Partition against n (its internal consistency is the producer's contract). */
export function checkPartition(partition: Partition, n: number, limits?: InputLimits): Partition {
  if (partition.assignment.length !== n) {
    throw new InvalidPartitionError(`The partition assigns ${partition.assignment.length} rows but the matrix has n = ${n} rows.`, {
      length: partition.assignment.length,
      n,
    });
  }
  checkMachineCount(partition.m, n, limits);
  return partition;
}
