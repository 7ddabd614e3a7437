/**
 * Studies as the job layer stores and serves them (the API's `Study` shape; src/api/schemas/study.ts
 * is checked against these types), and the StudyService the HTTP layer calls.
 */
import type { StudyResult } from '../../solvers/studies/aggregate.js';
import type { GridParameter } from '../../solvers/studies/definition.js';
import type { FigureSpec, StudyPreset, StudyRequest } from '../../solvers/studies/presets.js';
import type { Labels, NotifyView, ProblemDetails, WebhookDelivery, WebhookTarget } from '../types.js';

export const STUDY_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type StudyStatus = (typeof STUDY_STATUSES)[number];
export const FINISHED_STUDY_STATUSES: readonly StudyStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface PointProgress {
  point: number;
  done: number;
  total: number;
}

export interface StudyProgress {
  /** Samples done (kept, dropped or failed) over all grid points, of `total`. */
  done: number;
  total: number;
  chunksDone: number;
  chunks: number;
  points: PointProgress[];
}

export interface Study {
  id: string;
  /** The API key the study belongs to; null without keys (AUTH_MODE=none). */
  owner: string | null;
  status: StudyStatus;
  preset: StudyPreset | null;
  request: StudyRequest;
  /** The grid's points, with every setting resolved, in result order. */
  points: { index: number; settings: Record<GridParameter, number> }[];
  samplesPerPoint: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  progress: StudyProgress;
  result: StudyResult | null;
  error: ProblemDetails | null;
  figures: FigureSpec[];
  /** Present when the study was submitted with `notify` (its URL; the secret is never shown). */
  notify?: NotifyView;
  /** The attempts to deliver the study's end to `notify.url` (present with `notify`). */
  deliveries?: WebhookDelivery[];
  labels: Labels;
}

export interface StudySummary {
  id: string;
  owner: string | null;
  status: StudyStatus;
  preset: StudyPreset | null;
  createdAt: string;
  finishedAt: string | null;
  progress: { done: number; total: number };
  labels: Labels;
  /** Present when the study failed: why. */
  error?: ProblemDetails;
}

export interface StudyPage {
  items: StudySummary[];
  nextCursor: string | null;
}

export type StudyEvent = { event: 'status'; data: { status: StudyStatus; study: Study } } | { event: 'progress'; data: StudyProgress };

/** A change of any study, for list-wide listeners (GET /v1/events): the study as it is now. */
export interface AnyStudyEvent {
  event: 'status' | 'progress';
  study: Study;
}

/** `requester`: the caller's API key id (null without keys: every study is visible). */
export interface StudyService {
  /**
   * `checkSamples` sees the study's total sample-analyses before anything is stored (a per-key limit may throw).
   * `requester`: whose stored matrices the request may name (null: any owner's; default `owner`).
   */
  create(
    request: StudyRequest,
    owner: string | null,
    checkSamples?: (samples: number) => void,
    requester?: string | null,
    notify?: WebhookTarget | null,
  ): Promise<Study>;
  get(id: string, requester: string | null): Promise<Study>;
  /** `labels`: only studies carrying every one of these [key, value] pairs. */
  list(
    query: { status?: StudyStatus; labels?: [string, string][]; limit: number; cursor?: string },
    requester: string | null,
  ): Promise<StudyPage>;
  cancel(id: string, requester: string | null): Promise<Study>;
  remove(id: string, requester: string | null): Promise<void>;
  /** The raw per-sample values as CSV text. */
  samplesCsv(id: string, requester: string | null): Promise<string>;
  subscribe(id: string, requester: string | null, listener: (event: StudyEvent) => void): Promise<() => void>;
  /** Every study's changes, whoever owns it (the caller filters), until the returned function is called; absent: no study events. */
  subscribeAll?(listener: (event: AnyStudyEvent) => void): () => void;
  close(): Promise<void>;
}
