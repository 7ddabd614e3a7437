/**
 * The plan of a stored study: its request and, for a study over a stored matrix, the matrix's
 * document as read at creation (so the API and every worker derive the same plan, whatever happened
 * to the matrix since).
 */
import type { Config } from '../../config.js';
import { planStudy, type StudyPlan } from '../../solvers/studies/plan.js';
import { studyLimits } from './studyQueues.js';
import type { StudyRecord } from './studyStore.js';

export function planOfRecord(record: Pick<StudyRecord, 'request' | 'matrix'>, config: Config): StudyPlan {
  return planStudy(record.request, studyLimits(config), record.matrix ?? null);
}
