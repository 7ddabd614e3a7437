/**
 * GET /v1/jobs/{id}/events: Server-Sent Events. First the current status, then `progress` and
 * `status` events until the job ends; the stream closes after the final status. Comment lines
 * (heartbeats) keep proxies from timing the connection out.
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { FINISHED_STATUSES, type JobEvent, type JobService } from '../../jobs/types.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { JobIdParamsSchema } from '../schemas/job.js';
import { problemResponses } from '../schemas/problem.js';

export interface EventRoutesOptions {
  jobService: JobService;
  heartbeatMs: number;
}

const DESCRIPTION = `text/event-stream. Events:
- \`event: status\`, data \`{ "status": JobStatus, "job": Job }\`: first the status at subscription time, then each change;
- \`event: progress\`, data \`JobProgress\` (about every PROGRESS_INTERVAL_MS while the job runs).
The stream ends after the status event of a finished job (succeeded, failed, cancelled). Lines starting with ":" are heartbeats.`;

export const eventRoutes: FastifyPluginCallbackZod<EventRoutesOptions> = (app, { jobService, heartbeatMs }, done) => {
  // Open streams would keep app.close() waiting forever: end them before the server closes.
  const openStreams = new Set<() => void>();
  app.addHook('preClose', (hookDone) => {
    for (const end of openStreams) end();
    hookDone();
  });

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
          200: { description: 'An event stream.', content: { 'text/event-stream': { schema: z.string() } } },
          ...problemResponses(400, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const raw = reply.raw;
      // The one buffer of early events: the first status event comes while subscribe() runs, before
      // the stream can open (an unknown job must still get a 404 problem). JobService delivers
      // events as they come.
      const early: JobEvent[] = [];
      let streaming = false;
      let ended = false;
      let heartbeat: NodeJS.Timeout | undefined = undefined;
      let unsubscribe: (() => void) | undefined = undefined;

      const end = (): void => {
        if (ended) return;
        ended = true;
        openStreams.delete(end);
        clearInterval(heartbeat);
        unsubscribe?.();
        if (!raw.writableEnded) raw.end();
      };
      const write = (event: JobEvent): void => {
        if (ended) return;
        raw.write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
        if (event.event === 'status' && FINISHED_STATUSES.includes(event.data.status)) end();
      };

      // Throws JobNotFoundError (404) before anything is sent.
      unsubscribe = await jobService.subscribe(
        request.params.id,
        (event) => (streaming ? write(event) : early.push(event)),
        ownerFilterOf(request),
      );

      reply.hijack();
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      raw.write(': stream of job events\nretry: 2000\n\n');
      streaming = true;
      openStreams.add(end);
      raw.on('close', end);
      heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), heartbeatMs);
      for (const event of early.splice(0)) write(event);
    },
  );
  done();
};
