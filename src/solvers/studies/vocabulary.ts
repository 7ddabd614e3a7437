/**
 * The choices a study definition (./definition.ts) is made of, each one `as const` list and its
 * type: what a grid varies, how rows are partitioned, which generator and which sampler. A module
 * of its own so that the samplers' modules (./metrics.ts, ./storedMatrix.ts), which the definition's
 * checks call, read them without importing the definition back.
 */
/** The settings a grid can vary, in the order the grid's axes are expanded (the last varies fastest). */
export const GRID_PARAMETERS = ['mean', 'std', 'sigma', 'eps', 'blockSize', 'p', 'skew', 'rowsPerFeature', 'n', 'm'] as const;
export type GridParameter = (typeof GRID_PARAMETERS)[number];

/** The settings only the regression generator reads (a matrix seed of another generator does not depend on them). */
export const REGRESSION_PARAMETERS: readonly GridParameter[] = ['skew', 'rowsPerFeature'];

/** How the rows of each sample's matrix are spread over its m machines. */
export const PARTITION_FAMILIES = ['contiguous', 'round-robin', 'random'] as const;
export type PartitionFamily = (typeof PARTITION_FAMILIES)[number];

/** Generators a study can draw its matrices from (src/solvers/input/generators.ts). */
export const STUDY_GENERATORS = ['gaussian', 'structured-gaussian', 'ones-minus-eps', 'block-diagonal', 'regression'] as const;
export type StudyGenerator = (typeof STUDY_GENERATORS)[number];

/**
 * What one sample is:
 *  - 'analysis': a seeded n x n matrix from `generator`, partitioned over m machines, analyzed (the
 *    regression generator: a tall system of rowsPerFeature * n samples of n features and its labels,
 *    drawn machine by machine over the sample's partition, src/solvers/input/regression.ts);
 *  - 'subspace-pair': two independent p x n Gaussian blocks (two machines' rows), whose smallest
 *    principal angle theta_12 is measured (the paper's Experiment 3; no square system involved).
 */
export const STUDY_SAMPLERS = ['analysis', 'subspace-pair'] as const;
export type StudySampler = (typeof STUDY_SAMPLERS)[number];
