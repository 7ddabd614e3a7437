/**
 * The public algorithm ids and the registry mapping each to its implementation.
 * Adding an algorithm: one new file implementing DistributedAlgorithm, one line here.
 */
import { InvalidParameterError } from '../errors.js';
import { apc } from './apc.js';
import { cimmino } from './cimmino.js';
import { dgd } from './dgd.js';
import { dhbm } from './dhbm.js';
import { dnag } from './dnag.js';
import { mlm } from './mlm.js';
import type { DistributedAlgorithm } from './types.js';

export const ALGORITHM_IDS = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const;
export type AlgorithmId = (typeof ALGORITHM_IDS)[number];

export const algorithms: Record<AlgorithmId, DistributedAlgorithm> = { apc, dhbm, dgd, dnag, cimmino, mlm };

export function isAlgorithmId(id: string): id is AlgorithmId {
  return (ALGORITHM_IDS as readonly string[]).includes(id);
}

/** The algorithm with this public id; InvalidParameterError naming the valid ids otherwise. */
export function getAlgorithm(id: string): DistributedAlgorithm {
  if (!isAlgorithmId(id)) {
    throw new InvalidParameterError(`Unknown algorithm "${id}"; valid ids: ${ALGORITHM_IDS.join(', ')}.`, {
      algorithm: id,
      validAlgorithms: [...ALGORITHM_IDS],
    });
  }
  return algorithms[id];
}
