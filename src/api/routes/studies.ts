/**
 * /v1/studies: create (202 + Location), list, read, cancel, delete, Server-Sent Events, the raw
 * samples as CSV and the figures as SVG. A study belongs to the API key that created it: another
 * key's study answers 404, and lists show the caller's own (everything without keys).
 */
import type { FastifyContentTypeParser, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { StoreUnavailableError } from '../../jobs/errors.js';
import { StudyFigureNotFoundError, StudyNotFinishedError } from '../../jobs/studies/errors.js';
import { FINISHED_STUDY_STATUSES, type StudyEvent, type StudyService } from '../../jobs/studies/types.js';
import { streamEvents, trackOpenStreams } from '../eventStream.js';
import { renderStudyFigure } from '../figures/studyFigure.js';
import { createIdempotently, IDEMPOTENCY_409, IdempotentHeadersSchema, jsonFingerprint, REPLAYED_HEADER } from '../idempotency.js';
import type { IdempotencyService } from '../../jobs/service/idempotencyStore.js';
import { atFieldAsync, studyPointer } from '../requestFields.js';
import { JSON_BODY_400, JSON_BODY_413, problemResponse, problemResponses } from '../schemas/problem.js';
import { labelPairs } from '../schemas/labels.js';
import { jsonResponse } from '../schemas/responses.js';
import {
  StudyEventDataSchema,
  CreateStudyBodySchema,
  ListStudiesQuerySchema,
  StudyFigureParamsSchema,
  StudyIdParamsSchema,
  StudyPageSchema,
  StudySchema,
} from '../schemas/study.js';

export interface StudyRoutesOptions {
  /** null: the routes exist (OpenAPI) but answer 503. */
  studyService: StudyService | null;
  /** The owner (API key id) recorded on a study the request creates; null without keys. */
  ownerOf: (request: FastifyRequest) => string | null;
  /** The owner the request's reads are confined to; null for an admin key or without keys (every study). */
  requesterOf: (request: FastifyRequest) => string | null;
  /** Throws (413) when a study of `samples` sample-analyses exceeds the request's API key limit. */
  assertSamples: (request: FastifyRequest, samples: number) => void;
  heartbeatMs: number;
  /** The Idempotency-Key records (shared with the job routes). */
  idempotency: IdempotencyService;
}

const unavailable = (): never => {
  throw new StoreUnavailableError('this process runs no study service');
};
const offlineStudies: StudyService = {
  create: unavailable,
  get: unavailable,
  list: unavailable,
  cancel: unavailable,
  remove: unavailable,
  samplesCsv: unavailable,
  subscribe: unavailable,
  close: () => Promise.resolve(),
};

const BAD_ID = problemResponse(400, 'The study id is longer than 64 characters (`invalid-request`).');
const NO_SUCH_STUDY_WORDS = "No such study (`study-not-found`): never created, expired, deleted, or another API key's";
const NO_SUCH_STUDY = problemResponse(404, `${NO_SUCH_STUDY_WORDS}.`);

const ignoreBody: FastifyContentTypeParser = (_request, payload, done) => {
  payload.on('error', (error) => done(error, undefined));
  payload.on('end', () => done(null, undefined));
  payload.resume();
};

const EVENTS_DESCRIPTION = `text/event-stream. Events:
- \`event: status\`, data \`{ "status": StudyStatus, "study": Study }\`: first the status at subscription time, then each change;
- \`event: progress\`, data \`StudyProgress\` (samples done of the total, per grid point) after each chunk a worker finishes.
The stream ends after the status event of a finished study. Lines starting with ":" are heartbeats.`;

export const studyRoutes: FastifyPluginAsyncZod<StudyRoutesOptions> = async (app, options) => {
  const studies = options.studyService ?? offlineStudies;
  const { ownerOf, requesterOf: readerOf, assertSamples } = options;

  app.post(
    '/studies',
    {
      schema: {
        tags: ['studies'],
        operationId: 'createStudy',
        summary: "Submit a study: a grid of settings x seeded samples x metrics (the paper's experiments as presets)",
        description: [
          'Validates the grid and the metrics (400 for schema violations such as an empty axis; 422 for an unknown metric, too many',
          'grid points or settings that cannot be sampled; 413 above MAX_STUDY_SAMPLES, MAX_STUDY_POINT_SAMPLES or MAX_STUDY_N),',
          "404 when `matrix` names a stored matrix that does not exist or is another API key's, before anything is queued",
          '(a study over a stored matrix varies only m and the partition: any other grid axis or setting is a 422 naming it);',
          'then queues it as a BullMQ flow whose children (chunks of samples) any worker takes. The body may be sent',
          'gzip-compressed (`Content-Encoding: gzip`; BODY_LIMIT_BYTES bounds it decompressed too).',
          'Answers 202 with the study and its URL in `Location`. With an `Idempotency-Key`, a repeat of the request answers',
          'the same study again (422 when the key was used with another body).',
        ].join(' '),
        headers: IdempotentHeadersSchema,
        body: CreateStudyBodySchema,
        response: {
          202: {
            description: 'The study, queued.',
            headers: {
              Location: { type: 'string', description: 'The URL of the study, `/v1/studies/{id}`.', required: true },
              ...REPLAYED_HEADER,
            },
            content: { 'application/json': { schema: StudySchema } },
          },
          ...problemResponse(400, `${JSON_BODY_400}, e.g. an empty grid axis.`),
          ...problemResponse(404, "The stored matrix that `matrix` names does not exist, or is another API key's (`matrix-not-found`)."),
          ...problemResponse(
            413,
            `${JSON_BODY_413}; more samples than MAX_STUDY_SAMPLES or MAX_STUDY_POINT_SAMPLES, n above MAX_STUDY_N (\`too-large\`), ` +
              "or than the API key's study samples (`quota-too-large`).",
          ),
          ...problemResponse(
            422,
            'The study cannot be run as given: an unknown metric, too many grid points, settings that cannot be sampled, or a ' +
              'grid axis a study over a stored matrix cannot vary (`code` says which, `detail` names the setting); an ' +
              '`Idempotency-Key` already used with another request (`idempotency-key-reused`).',
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
        options.idempotency,
        () => jsonFingerprint('POST /v1/studies', request.body),
        async () => {
          // The callback is kept apart from the request, which the study shows.
          const { notify, ...studyRequest } = request.body;
          const study = await atFieldAsync(studyPointer(studyRequest), () =>
            studies.create(studyRequest, ownerOf(request), (samples) => assertSamples(request, samples), readerOf(request), notify ?? null),
          );
          request.log.info({ studyId: study.id, points: study.points.length, samples: study.progress.total }, 'study created');
          return { statusCode: 202, location: `/v1/studies/${study.id}`, body: JSON.stringify(study) };
        },
      ),
  );

  app.get(
    '/studies',
    {
      schema: {
        tags: ['studies'],
        operationId: 'listStudies',
        summary: 'List studies, newest first',
        description:
          'Pages of study summaries; pass `nextCursor` as `cursor` for the next page. Optional filters: `status`, and ' +
          '`label=key:value` (repeatable: studies carrying every label given).',
        querystring: ListStudiesQuerySchema,
        response: {
          200: jsonResponse('A page of study summaries, newest first.', StudyPageSchema),
          ...problemResponse(
            400,
            'A bad `status`, `label` or `limit` (`invalid-request`), or a `cursor` that GET /v1/studies did not issue (`invalid-cursor`).',
          ),
          ...problemResponses(503),
        },
      },
    },
    async (request) => {
      const { label, ...query } = request.query;
      return studies.list({ ...query, labels: labelPairs(label) }, readerOf(request));
    },
  );

  app.get(
    '/studies/:id',
    {
      schema: {
        tags: ['studies'],
        operationId: 'getStudy',
        summary: 'A study: status, progress, and once it has succeeded its results per grid point',
        description: [
          'The study as stored: its grid points, progress (samples done per point) while it runs, and once it has succeeded `result`:',
          'per point kept / dropped (with why) / failed counts and per metric the mean, standard error, 95% interval, min and max',
          "(histograms, exceedance probabilities and closed forms where asked for), and a preset's reference values beside its means.",
          "400 for an id longer than 64 characters; 404 for an unknown study or another API key's.",
        ].join(' '),
        params: StudyIdParamsSchema,
        response: { 200: jsonResponse('The study.', StudySchema), ...BAD_ID, ...NO_SUCH_STUDY, ...problemResponses(503) },
      },
    },
    async (request) => studies.get(request.params.id, readerOf(request)),
  );

  app.get(
    '/studies/:id/samples.csv',
    {
      schema: {
        tags: ['studies'],
        operationId: 'getStudySamples',
        summary: 'The raw per-sample values as CSV (point, settings, sample, seed, status, reason, one column per metric)',
        description:
          'Every sample stored so far (chunks finish one at a time), one row per grid point and sample; an empty value where a metric has none.',
        params: StudyIdParamsSchema,
        response: {
          200: { description: 'CSV text (RFC 4180), the samples stored so far.', content: { 'text/csv': { schema: z.string() } } },
          ...BAD_ID,
          ...NO_SUCH_STUDY,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const csv = await studies.samplesCsv(request.params.id, readerOf(request));
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="study-${request.params.id}.csv"`)
        .send(csv);
    },
  );

  app.get(
    '/studies/:id/figures/:name',
    {
      schema: {
        tags: ['studies'],
        operationId: 'getStudyFigure',
        summary: "A figure of the study's results as SVG (names in the study's `figures`)",
        description:
          "409 until the study has succeeded; 404 for a figure the study does not have (the study's `figures` list its names; " +
          'a `.svg` suffix is optional).',
        params: StudyFigureParamsSchema,
        response: {
          200: { description: 'An SVG image.', content: { 'image/svg+xml': { schema: z.string() } } },
          ...problemResponse(400, 'The study id or the figure name is longer than 64 characters (`invalid-request`).'),
          ...problemResponse(
            404,
            `${NO_SUCH_STUDY_WORDS}; or the study has no figure of this name (\`figure-not-found\`, naming those it has).`,
          ),
          ...problemResponse(
            409,
            'The study is queued, running, failed or cancelled (`study-not-finished`): figures exist once it has succeeded.',
          ),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const study = await studies.get(request.params.id, readerOf(request));
      const name = request.params.name.replace(/\.svg$/, '');
      const figure = study.figures.find((candidate) => candidate.name === name);
      if (!figure)
        throw new StudyFigureNotFoundError(
          study.id,
          name,
          study.figures.map((candidate) => candidate.name),
        );
      if (study.status !== 'succeeded' || !study.result)
        throw new StudyNotFinishedError(study.id, study.status, 'its figures exist once it has succeeded');
      return reply.type('image/svg+xml; charset=utf-8').send(renderStudyFigure(figure, study.result));
    },
  );

  await app.register(bodylessStudyRoutes, { studies, readerOf, heartbeatMs: options.heartbeatMs });
};

const bodylessStudyRoutes: FastifyPluginCallbackZod<{
  studies: StudyService;
  readerOf: StudyRoutesOptions['requesterOf'];
  heartbeatMs: number;
}> = (bodyless, { studies, readerOf, heartbeatMs }, done) => {
  bodyless.removeAllContentTypeParsers();
  bodyless.addContentTypeParser('*', ignoreBody);

  bodyless.post(
    '/studies/:id/cancel',
    {
      schema: {
        tags: ['studies'],
        operationId: 'cancelStudy',
        summary: 'Cancel a study and its unfinished chunks',
        description:
          'Queued chunks are removed; running ones stop within ~50 ms of computation and store nothing. A finished study is returned unchanged.',
        params: StudyIdParamsSchema,
        response: {
          200: jsonResponse('The study, cancelled (or unchanged when it had already finished).', StudySchema),
          ...BAD_ID,
          ...NO_SUCH_STUDY,
          ...problemResponses(503),
        },
      },
    },
    async (request) => studies.cancel(request.params.id, readerOf(request)),
  );

  bodyless.delete(
    '/studies/:id',
    {
      schema: {
        tags: ['studies'],
        operationId: 'deleteStudy',
        summary: 'Delete a finished study, its BullMQ parent and children and its stored samples',
        description: '409 while it is queued or running (cancel it first).',
        params: StudyIdParamsSchema,
        response: {
          204: z.undefined().describe('Deleted.'),
          ...BAD_ID,
          ...NO_SUCH_STUDY,
          ...problemResponse(409, 'The study is queued or running (`study-not-finished`): cancel it first.'),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      await studies.remove(request.params.id, readerOf(request));
      return reply.code(204).send();
    },
  );

  const openStreams = trackOpenStreams(bodyless);

  bodyless.get(
    '/studies/:id/events',
    {
      schema: {
        tags: ['studies'],
        operationId: 'streamStudyEvents',
        summary: 'Progress and status changes of a study (Server-Sent Events)',
        description: EVENTS_DESCRIPTION,
        params: StudyIdParamsSchema,
        response: {
          200: {
            description: "An event stream; each event's data is a StudyEventData.",
            content: { 'text/event-stream': { schema: StudyEventDataSchema } },
          },
          ...BAD_ID,
          ...NO_SUCH_STUDY,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      // Throws StudyNotFoundError (404) before anything is sent.
      await streamEvents<StudyEvent>(reply, openStreams, {
        subscribe: (deliver) => studies.subscribe(request.params.id, readerOf(request), deliver),
        isLast: (event) => event.event === 'status' && FINISHED_STUDY_STATUSES.includes(event.data.status),
        banner: 'stream of study events',
        heartbeatMs,
      });
    },
  );
  done();
};
