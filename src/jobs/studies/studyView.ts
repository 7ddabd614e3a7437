/** The API's Study from what the store holds and the study's plan. */
import type { StudyResult } from '../../solvers/studies/aggregate.js';
import { GRID_PARAMETERS } from '../../solvers/studies/definition.js';
import type { StudyPlan } from '../../solvers/studies/plan.js';
import type { StoredStudy } from './studyStore.js';
import type { Study, StudyProgress, StudySummary } from './types.js';

export function progressOf(plan: StudyPlan, stored: StoredStudy): StudyProgress {
  const perPoint = new Array<number>(plan.points.length).fill(0);
  let done = 0;
  for (const [chunkIndex, count] of stored.done) {
    const chunk = plan.chunks[chunkIndex];
    if (!chunk) continue;
    const group = plan.groups[chunk.group];
    const perPointDone = count / group.points.length;
    for (const point of group.points) perPoint[point.index] += perPointDone;
    done += count;
  }
  const samples = plan.definition.samples;
  return {
    done,
    total: plan.points.length * samples,
    chunksDone: stored.done.size,
    chunks: plan.chunks.length,
    points: perPoint.map((pointDone, point) => ({ point, done: pointDone, total: samples })),
  };
}

export function studyOf(plan: StudyPlan, stored: StoredStudy): Study {
  const { record } = stored;
  return {
    id: record.id,
    owner: record.owner,
    status: stored.status,
    preset: plan.preset,
    request: record.request,
    points: plan.points.map((point) => ({
      index: point.index,
      settings: Object.fromEntries(GRID_PARAMETERS.map((name) => [name, point.settings[name]])) as Study['points'][number]['settings'],
    })),
    samplesPerPoint: plan.definition.samples,
    createdAt: record.createdAt,
    startedAt: stored.startedAt,
    finishedAt: stored.finishedAt,
    progress: progressOf(plan, stored),
    result: stored.result ? (JSON.parse(stored.result) as StudyResult) : null,
    error: stored.error,
    figures: plan.figures,
    ...(stored.notifyUrl ? { notify: { url: stored.notifyUrl }, deliveries: stored.deliveries } : {}),
    labels: record.request.labels ?? {},
  };
}

export function summaryOf(study: Study): StudySummary {
  const { id, owner, status, preset, createdAt, finishedAt, progress, labels, error } = study;
  return {
    id,
    owner,
    status,
    preset,
    createdAt,
    finishedAt,
    progress: { done: progress.done, total: progress.total },
    labels,
    ...(error ? { error } : {}),
  };
}
