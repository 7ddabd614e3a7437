/**
 * The list-wide event stream (GET /v1/events): the `data` of its events. These schemas are the
 * shapes' one definition (the stream is an API-only view of the jobs' and studies' events); the
 * OpenAPI document names them, so generated clients (and the dashboard) get their types.
 */
import { z } from 'zod';
import { JOB_STATUSES } from '../../jobs/types.js';
import { JobProgressSchema, JobStatusSchema, JobSummarySchema } from './job.js';
import { StudyStatusSchema, StudySummarySchema } from './study.js';

/** Jobs and studies share their statuses: one filter serves both. */
export const ListEventsQuerySchema = z.object({
  status: z
    .enum(JOB_STATUSES)
    .optional()
    .describe(
      'Only events of jobs and studies with this status: their status events when they enter or leave it, their progress ' +
        '(with `running`), and a snapshot of those that have it. Absent: every change, and a snapshot of the unfinished ones.',
    ),
});

export const ListSnapshotSchema = z
  .object({
    jobs: z.array(JobSummarySchema).describe('Newest first.'),
    studies: z.array(StudySummarySchema).describe('Newest first.'),
    truncated: z
      .boolean()
      .describe('More jobs or studies have these statuses than the snapshot lists (page through GET /v1/jobs, /v1/studies).'),
  })
  .describe('Sent first: the jobs and studies with the filtered status (without a filter: queued or running) when the stream opened.')
  .meta({ id: 'ListSnapshot' });

export const ListStatusEventSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('job'), id: z.string(), status: JobStatusSchema, job: JobSummarySchema }),
    z.object({ kind: z.literal('study'), id: z.string(), status: StudyStatusSchema, study: StudySummarySchema }),
  ])
  .describe('A job or study was created or changed status (also sent for one the snapshot listed, if it changed meanwhile).')
  .meta({ id: 'ListStatusEvent' });

export const ListProgressEventSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('job'), id: z.string(), progress: JobProgressSchema }),
    z.object({
      kind: z.literal('study'),
      id: z.string(),
      progress: z.object({ done: z.int().min(0), total: z.int().min(0) }).describe('Samples done, of `total`.'),
    }),
  ])
  .describe('A running job or study reported progress.')
  .meta({ id: 'ListProgressEvent' });

export const ListEventDataSchema = z
  .union([ListSnapshotSchema, ListStatusEventSchema, ListProgressEventSchema])
  .describe('The `data` of an event: `snapshot` ListSnapshot, `status` ListStatusEvent, `progress` ListProgressEvent.')
  .meta({ id: 'ListEventData' });

export type ListSnapshot = z.output<typeof ListSnapshotSchema>;
export type ListStatusEvent = z.output<typeof ListStatusEventSchema>;
export type ListProgressEvent = z.output<typeof ListProgressEventSchema>;

/** An event of the list-wide stream, as src/api/eventStream.ts writes it. */
export type ListEvent =
  { event: 'snapshot'; data: ListSnapshot } | { event: 'status'; data: ListStatusEvent } | { event: 'progress'; data: ListProgressEvent };
