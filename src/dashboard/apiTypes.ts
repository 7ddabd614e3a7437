/**
 * The API's shapes as the dashboard sees them: the types generated from the OpenAPI document
 * (`npm run generate:client` writes apiSchema.d.ts beside this file), so the dashboard is checked against
 * the public contract, not the server's internals.
 */
import type { components } from './apiSchema.js';

type Schemas = components['schemas'];
export type Job = Schemas['Job'];
export type JobSummary = Schemas['JobSummary'];
export type JobPage = Schemas['JobPage'];
export type JobStatus = Schemas['JobStatus'];
export type JobProgress = Schemas['JobProgress'];
export type Run = Schemas['Run'];
export type Trace = Schemas['Trace'];
export type Solution = Schemas['Solution'];
export type Analysis = Schemas['Analysis'];
export type Problem = Schemas['Problem'];
export type StoredMatrix = Schemas['StoredMatrix'];
export type AlgorithmId = Schemas['AlgorithmId'];
export type CreateJobRequest = Schemas['CreateJobRequestInput'];
export type ListSnapshot = Schemas['ListSnapshot'];
export type ListStatusEvent = Schemas['ListStatusEvent'];
export type ListProgressEvent = Schemas['ListProgressEvent'];

export const ALGORITHMS: readonly AlgorithmId[] = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'];

export const ALGORITHM_NAMES: Record<AlgorithmId, string> = {
  apc: 'APC',
  dhbm: 'D-HBM',
  dgd: 'DGD',
  dnag: 'D-NAG',
  cimmino: 'Block Cimmino',
  mlm: 'Mou-Liu-Morse',
};

export const FINISHED_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export const isFinished = (status: JobStatus): boolean => FINISHED_STATUSES.includes(status);

/** A job's status event (GET /v1/jobs/{id}/events). */
export interface StatusEvent {
  status: JobStatus;
  job: Job;
}

export type Study = Schemas['Study'];
export type StudySummary = Schemas['StudySummary'];
export type StudyPage = Schemas['StudyPage'];
export type StudyProgress = Schemas['StudyProgress'];

/** A study's status event (GET /v1/studies/{id}/events). */
export interface StudyStatusEvent {
  status: JobStatus;
  study: Study;
}
