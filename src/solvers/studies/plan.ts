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

export interface StudyPlan extends NormalizedStudy {
  points: GridPoint[];
  groups: PointGroup[];
  chunks: StudyChunk[];
}

export function planStudy(request: StudyRequest, limits: StudyLimits): StudyPlan {
  const normalized = normalizeStudyRequest(request);
  const points = validateStudy(normalized.definition, limits);
  const groups = groupPoints(normalized.definition, points);
  return { ...normalized, points, groups, chunks: chunkStudy(normalized.definition, groups) };
}
