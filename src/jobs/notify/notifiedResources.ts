/**
 * Jobs and studies as the callbacks' delivery reads and writes them: the target (url, secret) and
 * the body, the summary as GET /v1/jobs and GET /v1/studies list it, read at each attempt.
 */
import type { Config } from '../../config.js';
import type { JobStore } from '../store/jobStore.js';
import { planOfRecord } from '../studies/studyPlan.js';
import type { StudyStore } from '../studies/studyStore.js';
import { studyOf, summaryOf } from '../studies/studyView.js';
import type { NotifiedResources } from './notifyWorker.js';

export function notifiedResources(jobs: JobStore, studies: StudyStore, config: Config): NotifiedResources {
  return {
    async webhookOf(kind, id) {
      if (kind === 'job') {
        const found = await jobs.webhookOf(id);
        return found && { target: found.target, body: JSON.stringify(found.summary) };
      }
      const [target, stored] = await Promise.all([studies.webhookTarget(id), studies.get(id)]);
      if (!target || !stored) return null;
      return { target, body: JSON.stringify(summaryOf(studyOf(planOfRecord(stored.record, config), stored))) };
    },
    recordDelivery: (kind, id, delivery, keep) =>
      kind === 'job' ? jobs.recordDelivery(id, delivery, keep) : studies.recordDelivery(id, delivery, keep),
  };
}
