/**
 * A study request made ready to run: normalized (presets expanded), validated against the limits,
 * its grid expanded into points, the points grouped by shared matrices and the samples split into
 * chunks. Deterministic: the API and every worker derive the same plan from the stored request.
 */
import {
  chunkStudy,
  groupPoints,
  validateStudy,
  type GridPoint,
  type PointGroup,
  type StudyChunk,
  type StudyLimits,
} from './definition.js';
import { normalizeStudyRequest, type NormalizedStudy, type StudyRequest } from './presets.js';
import type { StudyMatrix } from './storedMatrix.js';

export interface StudyPlan extends NormalizedStudy {
  points: GridPoint[];
  groups: PointGroup[];
  chunks: StudyChunk[];
}

/** `matrix`: the document of the matrix a request names (./storedMatrix.ts), as the service read it at creation. */
export function planStudy(request: StudyRequest, limits: StudyLimits, matrix: StudyMatrix | null = null): StudyPlan {
  const normalized = normalizeStudyRequest(request, matrix);
  const points = validateStudy(normalized.definition, limits);
  const groups = groupPoints(normalized.definition, points);
  return { ...normalized, points, groups, chunks: chunkStudy(normalized.definition, groups) };
}
