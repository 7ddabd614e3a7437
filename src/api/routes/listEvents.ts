/**
 * GET /v1/events: one Server-Sent Events stream of every job and study the caller may see (a key's
 * own; an admin key and AUTH_MODE=none all): a first snapshot, then their status changes and
 * progress, until the client leaves. One stream rather than one per job and one per study: a
 * browser keeps about six connections per host over HTTP/1.1, so a list of many rows can only be
 * live through one; and rather than one for jobs and one for studies: the dashboard lists both in
 * one table, and a client that wants one kind ignores the other's events (`kind`).
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { StudyService } from '../../jobs/studies/types.js';
import type { JobService } from '../../jobs/types.js';
import { streamEvents, trackOpenStreams } from '../eventStream.js';
import { ListEventFeed, SNAPSHOT_LIMIT } from '../listEventFeed.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { ListEventDataSchema, ListEventsQuerySchema, type ListEvent } from '../schemas/listEvent.js';
import { problemResponse, problemResponses } from '../schemas/problem.js';

export interface ListEventRoutesOptions {
  jobService: JobService;
  /** Null: the stream carries jobs only. */
  studyService: StudyService | null;
  heartbeatMs: number;
}

const DESCRIPTION = `text/event-stream, for as long as the client stays. Events (\`data\`: ListEventData):
- \`event: snapshot\` (ListSnapshot), first: the jobs and studies with the \`status\` asked for (without it: queued or running), up to ${SNAPSHOT_LIMIT} of each kind per status, newest first;
- \`event: status\` (ListStatusEvent): a job or study was created or changed status; \`kind\` says which, with its summary;
- \`event: progress\` (ListProgressEvent): a running job's progress (about every PROGRESS_INTERVAL_MS) or a study's samples done.
With \`status\`, a status event is sent when an item enters or leaves that status. Events that arrive while the snapshot is read follow it, so nothing is missed in between; a reconnecting client gets a new snapshot (an item it showed unfinished that is in neither has finished or was deleted: GET it). Lines starting with ":" are heartbeats.`;

export const listEventRoutes: FastifyPluginCallbackZod<ListEventRoutesOptions> = (app, { jobService, studyService, heartbeatMs }, done) => {
  const openStreams = trackOpenStreams(app);

  app.get(
    '/events',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'streamListEvents',
        summary: 'Status changes and progress of every job and study (Server-Sent Events)',
        description: DESCRIPTION,
        querystring: ListEventsQuerySchema,
        response: {
          200: {
            description: 'An event stream; each event’s data is a ListEventData.',
            content: { 'text/event-stream': { schema: ListEventDataSchema } },
          },
          ...problemResponse(400, 'A bad `status` (`invalid-request`).'),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const feed = new ListEventFeed({
        jobs: jobService,
        studies: studyService,
        owner: ownerFilterOf(request),
        status: request.query.status,
        onError: (err) => request.log.warn({ err }, 'a list-wide event was dropped'),
      });
      await streamEvents<ListEvent>(reply, openStreams, {
        subscribe: (deliver) => feed.open(deliver),
        isLast: () => false,
        banner: 'stream of job and study events',
        heartbeatMs,
      });
    },
  );
  done();
};
