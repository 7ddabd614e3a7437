/** /v1/jobs: create, list, read, cancel, delete. */
import type { FastifyContentTypeParser } from 'fastify';
import type { FastifyPluginAsyncZod, FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { JobService } from '../../jobs/types.js';
import { createIdempotently, IDEMPOTENCY_409, IdempotentHeadersSchema, jsonFingerprint, REPLAYED_HEADER } from '../idempotency.js';
import { toJobSpec } from '../jobSpec.js';
import { matricesSeenBy, ownerFilterOf, tenantOf } from '../plugins/auth.js';
import { sendJobView, sendPartition } from '../jobView.js';
import { JobIdParamsSchema, JobPageSchema, JobPartitionSchema, JobSchema, ListJobsQuerySchema } from '../schemas/job.js';
import { labelPairs } from '../schemas/labels.js';
import { CreateJobRequestSchema } from '../schemas/jobRequest.js';
import { JSON_BODY_400, JSON_BODY_413, problemResponse, problemResponses } from '../schemas/problem.js';
import { jsonResponse } from '../schemas/responses.js';

export interface JobRoutesOptions {
  jobService: JobService;
  config: Config;
}

/** A body sent with an operation that takes none is read to its end and ignored. */
/** The 400 and 404 of an operation on one job (here, its runs and its event stream). */
export const BAD_ID = problemResponse(400, 'The id is longer than 64 characters (`invalid-request`).');
export const NO_SUCH_JOB = problemResponse(404, "No such job (`job-not-found`): never created, expired, deleted, or another API key's.");

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
          'The body may be sent gzip-compressed (`Content-Encoding: gzip`; BODY_LIMIT_BYTES bounds it decompressed too).',
          'Answers 202 with the job and its URL in `Location`. With an `Idempotency-Key`, a repeat of the request answers the',
          'same job again (422 when the key was used with another body, 409 while its first request is still stuck in progress).',
        ].join(' '),
        headers: IdempotentHeadersSchema,
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
              ...REPLAYED_HEADER,
            },
            content: { 'application/json': { schema: JobSchema } },
          },
          ...problemResponse(400, `${JSON_BODY_400}.`),
          ...problemResponse(
            404,
            "The stored matrix that `matrix` names does not exist, or is another API key's (`matrix-not-found`); the job that " +
              '`partition.fromJob` or `partition.fromAdvice` names does not exist or is not yours (`job-not-found`).',
          ),
          ...problemResponse(
            413,
            `${JSON_BODY_413}; n above MAX_N (dense) or MAX_N_SPARSE, more than MAX_NNZ entries, or more memory than ` +
              "JOB_MEMORY_LIMIT_MB (`too-large`, `memory-limit`); more than the API key's stored bytes (`quota-too-large`).",
          ),
          ...problemResponse(
            422,
            'The problem is well formed but cannot be solved as given: not square, NaN or Infinity, a bad partition (or a ' +
              '`fromJob` whose job has another n: `dimension-mismatch` at /partition/fromJob; a `fromAdvice` naming a job that is ' +
              'not a succeeded advise job, `invalid-partition`, or one with another n, at /partition/fromAdvice), rhs of the wrong length, ' +
              'unsupported Matrix Market data, a generator parameter out of its domain... (`code` says which); ' +
              'an `Idempotency-Key` already used with another request (`idempotency-key-reused`).',
          ),
          ...IDEMPOTENCY_409,
          ...problemResponses(408, 415, 503),
        },
      },
    },
    async (request, reply) =>
      createIdempotently(
        request,
        reply,
        jobService.idempotency,
        () => jsonFingerprint('POST /v1/jobs', request.body),
        async () => {
          const owner = ownerFilterOf(request);
          const spec = await toJobSpec(
            request.body,
            config,
            matricesSeenBy(request, jobService.matrices),
            (id) => jobService.partition(id, owner),
            (id, algorithm) => jobService.solution(id, algorithm, owner),
            (id) => jobService.get(id, owner),
          );
          const job = await jobService.create(spec, tenantOf(request));
          request.log.info({ jobId: job.id, type: job.type, n: job.n, m: job.m }, 'job created');
          return { statusCode: 202, location: `/v1/jobs/${job.id}`, body: JSON.stringify(job) };
        },
      ),
  );

  app.get(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'listJobs',
        summary: 'List jobs, newest first',
        description: [
          'Pages of job summaries; pass `nextCursor` as `cursor` for the next page. Optional filters: `status`, and `label=key:value`',
          '(repeatable: jobs carrying every label given). 400 for a bad `status`, `label`, `limit` or `cursor`.',
        ].join(' '),
        querystring: ListJobsQuerySchema,
        response: {
          200: jsonResponse('A page of job summaries, newest first.', JobPageSchema),
          ...problemResponse(
            400,
            'A bad `status`, `label` or `limit` (`invalid-request`), or a `cursor` this service did not issue (`invalid-cursor`).',
          ),
          ...problemResponses(503),
        },
      },
    },
    async (request) => {
      const { label, ...query } = request.query;
      return jobService.list({ ...query, labels: labelPairs(label), owner: ownerFilterOf(request) });
    },
  );

  app.get(
    '/jobs/:id/partition',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'getJobPartition',
        summary: "The job's partition: which machine holds each row",
        description: [
          'The assignment of rows to machines the job runs on, whatever form the request gave it in (machines, sizes, groups,',
          'random, fromJob). Send it back as `{ "assignment": [...] }`, or name the job: `{ "fromJob": id }`.',
          '400 for an id longer than 64 characters.',
        ].join(' '),
        params: JobIdParamsSchema,
        response: {
          200: jsonResponse("The job's assignment and the machines' sizes.", JobPartitionSchema),
          ...BAD_ID,
          ...NO_SUCH_JOB,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => sendPartition(reply, await jobService.partition(request.params.id, ownerFilterOf(request))),
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
        response: { 200: jsonResponse('The job.', JobSchema), ...BAD_ID, ...NO_SUCH_JOB, ...problemResponses(503) },
      },
    },
    async (request, reply) => sendJobView(reply, await jobService.view(request.params.id, ownerFilterOf(request))),
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
        response: {
          200: jsonResponse(
            'The job as it stands: `cancelled` when it was queued; a running one stays `running` until its worker stops it ' +
              '(within one time slice: watch its events or GET it); unchanged when it had already finished.',
            JobSchema,
          ),
          ...BAD_ID,
          ...NO_SUCH_JOB,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => sendJobView(reply, await jobService.cancel(request.params.id, ownerFilterOf(request))),
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
        response: {
          204: z.undefined().describe('Deleted.'),
          ...BAD_ID,
          ...NO_SUCH_JOB,
          ...problemResponse(409, 'The job is queued or running (`job-not-finished`): cancel it first.'),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      await jobService.remove(request.params.id, ownerFilterOf(request));
      return reply.code(204).send();
    },
  );
  done();
};
