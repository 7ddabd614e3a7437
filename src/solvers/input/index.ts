/** The input side of the numerical core: matrices, partitions and validated problems. */
export type { EntryValue, GeneratorSpec, InputLimits, MatrixInput, PartitionInput } from './types.js';
export { buildMatrix, MATRIX_FORMATS } from './buildMatrix.js';
export { parseMatrixMarket } from './matrixMarket.js';
export { generateMatrix, validateGeneratorSpec, GENERATOR_NAMES, type ValidatedGeneratorSpec } from './generators.js';
export { buildPartition, checkPartition } from './partition.js';
export { createProblem, type CreateProblemArgs } from './createProblem.js';
