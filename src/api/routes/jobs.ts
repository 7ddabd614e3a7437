/** /v1/jobs: create, list, read, cancel, delete. */
import type { FastifyContentTypeParser } from 'fastify';
import type { FastifyPluginAsyncZod, FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { JobService } from '../../jobs/types.js';
import { toJobSpec } from '../jobSpec.js';
import { matricesSeenBy, ownerFilterOf, tenantOf } from '../plugins/auth.js';
import { JobIdParamsSchema, JobPageSchema, JobSchema, ListJobsQuerySchema } from '../schemas/job.js';
import { CreateJobRequestSchema } from '../schemas/jobRequest.js';
import { problemResponses } from '../schemas/problem.js';

export interface JobRoutesOptions {
  jobService: JobService;
  config: Config;
}

/** A body sent with an operation that takes none is read to its end and ignored. */
const ignoreBody: FastifyContentTypeParser = (_request, payload, done) => {
  payload.on('error', (error) => done(error, undefined));
  payload.on('end', () => done(null, undefined));
  payload.resume();
};

export const jobRoutes: FastifyPluginAsyncZod<JobRoutesOptions> = async (app, { jobService, config }) => {
  app.post(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'createJob',
        summary: 'Submit an analysis or a solve',
        description: [
          'Validates the problem (400 for malformed JSON or schema violations, 422 for invalid problems, 413 when too large,',
          '415 for a body that is not `application/json`, 404 for a stored matrix that does not exist), stores it and queues the job.',
          'Answers 202 with the job and its URL in `Location`.',
        ].join(' '),
        body: CreateJobRequestSchema,
        response: {
          202: {
            description: 'The job, queued.',
            headers: {
              Location: {
                type: 'string',
                description: 'The URL of the job, `/v1/jobs/{id}` (relative to the service).',
                required: true,
              },
            },
            content: { 'application/json': { schema: JobSchema } },
          },
          ...problemResponses(400, 404, 408, 413, 415, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const spec = await toJobSpec(request.body, config, matricesSeenBy(request, jobService.matrices));
      const job = await jobService.create(spec, tenantOf(request));
      request.log.info({ jobId: job.id, type: job.type, n: job.n, m: job.m }, 'job created');
      return reply.code(202).header('location', `/v1/jobs/${job.id}`).send(job);
    },
  );

  app.get(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'listJobs',
        summary: 'List jobs, newest first',
        description: [
          'Pages of job summaries; pass `nextCursor` as `cursor` for the next page. Optional status filter.',
          '400 for a bad `status`, `limit` or `cursor`.',
        ].join(' '),
        querystring: ListJobsQuerySchema,
        response: { 200: JobPageSchema, ...problemResponses(400, 503) },
      },
    },
    async (request) => jobService.list({ ...request.query, owner: ownerFilterOf(request) }),
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'getJob',
        summary: 'A job: status, progress, result or error',
        description: [
          'The job as stored: its status and progress while it runs; when it ends, `result` (the analysis and a summary of each',
          "algorithm's run) or `error` (the problem that made it fail). 400 for an id longer than 64 characters.",
        ].join(' '),
        params: JobIdParamsSchema,
        response: { 200: JobSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => jobService.get(request.params.id, ownerFilterOf(request)),
  );

  await app.register(bodylessJobRoutes, { jobService });
};

/**
 * Cancel and delete take no body: one sent anyway (`curl -X POST -d ''` sends an empty form) is
 * ignored, whatever its media type, rather than answered with a 400 or a 415. Content-type parsers
 * are encapsulated, so this plugin's catch-all reaches these two routes only.
 */
const bodylessJobRoutes: FastifyPluginCallbackZod<{ jobService: JobService }> = (bodyless, { jobService }, done) => {
  bodyless.removeAllContentTypeParsers();
  bodyless.addContentTypeParser('*', ignoreBody);

  bodyless.post(
    '/jobs/:id/cancel',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'cancelJob',
        summary: 'Cancel a job',
        description: [
          'A queued job is cancelled at once; a running one stops within one time slice of its solver (runs finished so far',
          'are kept). A finished job is returned unchanged. Takes no body. 400 for an id longer than 64 characters.',
        ].join(' '),
        params: JobIdParamsSchema,
        response: { 200: JobSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => jobService.cancel(request.params.id, ownerFilterOf(request)),
  );

  bodyless.delete(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'deleteJob',
        summary: 'Delete a finished job and everything stored for it',
        description: [
          'Removes a finished job (succeeded, failed or cancelled), its inputs, traces and solutions; 409 while it is queued',
          'or running (cancel it first). Takes no body. 400 for an id longer than 64 characters.',
        ].join(' '),
        params: JobIdParamsSchema,
        response: { 204: z.undefined().describe('Deleted.'), ...problemResponses(400, 404, 409, 503) },
      },
    },
    async (request, reply) => {
      await jobService.remove(request.params.id, ownerFilterOf(request));
      return reply.code(204).send();
    },
  );
  done();
};
