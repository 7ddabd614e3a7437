/**
 * The public algorithm ids and the registry mapping each to its implementation.
 * Adding an algorithm: one new file implementing DistributedAlgorithm, one line here.
 */
export const ALGORITHM_IDS = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const;
export type AlgorithmId = (typeof ALGORITHM_IDS)[number];
