/**
 * GET /v1/jobs/{id}/events: Server-Sent Events. First the current status, then `progress` and
 * `status` events until the job ends; the stream closes after the final status. Comment lines
 * (heartbeats) keep proxies from timing the connection out.
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { FINISHED_STATUSES, type JobEvent, type JobService } from '../../jobs/types.js';
import { streamEvents, trackOpenStreams } from '../eventStream.js';
import { jobEventData } from '../jobView.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { JobEventDataSchema, JobIdParamsSchema } from '../schemas/job.js';
import { problemResponses } from '../schemas/problem.js';
import { BAD_ID, NO_SUCH_JOB } from './jobs.js';

export interface EventRoutesOptions {
  jobService: JobService;
  heartbeatMs: number;
}

const DESCRIPTION = `text/event-stream. Events:
- \`event: status\`, data \`{ "status": JobStatus, "job": Job }\`: first the status at subscription time, then each change;
- \`event: progress\`, data \`JobProgress\` (about every PROGRESS_INTERVAL_MS while the job runs).
The stream ends after the status event of a finished job (succeeded, failed, cancelled). Lines starting with ":" are heartbeats.`;

export const eventRoutes: FastifyPluginCallbackZod<EventRoutesOptions> = (app, { jobService, heartbeatMs }, done) => {
  const openStreams = trackOpenStreams(app);

  app.get(
    '/jobs/:id/events',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'streamJobEvents',
        summary: 'Progress and status changes of a job (Server-Sent Events)',
        description: DESCRIPTION,
        params: JobIdParamsSchema,
        response: {
          200: {
            description: "An event stream; each event's data is a JobEventData.",
            content: { 'text/event-stream': { schema: JobEventDataSchema } },
          },
          ...BAD_ID,
          ...NO_SUCH_JOB,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      // Throws JobNotFoundError (404) before anything is sent.
      await streamEvents<JobEvent>(reply, openStreams, {
        subscribe: (deliver) => jobService.subscribe(request.params.id, deliver, ownerFilterOf(request)),
        isLast: (event) => event.event === 'status' && FINISHED_STATUSES.includes(event.data.status),
        banner: 'stream of job events',
        dataOf: jobEventData,
        heartbeatMs,
      });
    },
  );
  done();
};
