/**
 * The HTTP API as a fastify app, built by a factory (as in fastify's demo application): the
 * caller owns the configuration, the JobService and the logger, so tests build the same app
 * against a real Redis and drive it with inject() or over a socket.
 */
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createSerializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Config } from '../config.js';
import type { StudyService } from '../jobs/studies/types.js';
import type { JobService } from '../jobs/types.js';
import { dashboard } from './plugins/dashboard.js';
import { assertStudySamples, installAuth, ownerFilterOf, ownerOf } from './plugins/auth.js';
import { installHardening } from './plugins/hardening.js';
import { installMetrics } from './plugins/metrics.js';
import { installOpenApi, openApiDocument } from './plugins/openapi.js';
import { installJsonBodies } from './plugins/jsonBody.js';
import { clientErrorHandler, errorHandler, installErrorHandling, MAX_PATH_PARAMETER_LENGTH } from './plugins/problems.js';
import { installRateLimit } from './plugins/rateLimit.js';
import { adminKeyRoutes } from './routes/adminKeys.js';
import { queueBoard } from './plugins/queueBoard.js';
import { eventRoutes } from './routes/events.js';
import { listEventRoutes } from './routes/listEvents.js';
import { healthRoutes } from './routes/health.js';
import { jobFigureRoutes } from './routes/jobFigures.js';
import { jobRoutes } from './routes/jobs.js';
import { matrixRoutes } from './routes/matrices.js';
import { problemTypeRoutes } from './routes/problemTypes.js';
import { runRoutes } from './routes/runs.js';
import { studyRoutes } from './routes/studies.js';
import { limitBodyTime } from './requestBody.js';

export interface BuildAppOptions {
  config: Config;
  jobService: JobService;
  /** Studies (POST /v1/studies...); without one the study routes exist but answer 503. */
  studyService?: StudyService | null;
  /** A pino logger (fastify's logger), or false for none. */
  logger?: FastifyBaseLogger | false;
  /**
   * 'strict': a response that does not match its schema is a 500 (tests). 'log' (default): it is
   * logged and sent as plain JSON, so a schema drift never makes a stored job unreadable.
   */
  responseValidation?: 'strict' | 'log';
  /**
   * Called with the root instance before any route is registered: its hooks see every route, and
   * the plugins it registers are part of the app (the tests add their OpenAPI contract check here).
   */
  extend?: (app: FastifyInstance) => void | Promise<void>;
}

export async function buildApp({
  config,
  jobService,
  studyService = null,
  logger = false,
  responseValidation = 'log',
  extend,
}: BuildAppOptions): Promise<FastifyInstance> {
  const handleError = errorHandler(config);
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Long-poll style SSE streams must not be cut by the default request timeout.
    requestTimeout: 0,
    // Logged by logRequests below: at info only what went wrong.
    logController: new LogController({ disableRequestLogging: true }),
    // An empty value (`?status=&limit=`, as forms and dashboards send it) means the parameter was not given.
    // Path parameters up to MAX_PATH_PARAMETER_LENGTH reach the routes' schemas (an id over 64 characters: a 400 naming
    // it); the router's own refusals (longer ones, a path that does not decode) are problems too.
    routerOptions: {
      querystringParser: (query) => withoutEmptyValues(parseQuery(query)),
      maxParamLength: MAX_PATH_PARAMETER_LENGTH,
    },
    frameworkErrors: (error, request, reply) => {
      handleError(error, request, reply);
    },
    clientErrorHandler,
  });

  // Request bodies are JSON: fastify's default text/plain parser would hand a text body to the zod
  // schemas (a 400 "expected object, received string"), where a body that is not JSON is a 415.
  // Content-type parsers are encapsulated: a route taking another media type (a Matrix Market
  // upload) adds its parser in its own plugin, and the JSON routes keep refusing that type.
  app.removeContentTypeParser('text/plain');
  limitBodyTime(app, config.UPLOAD_TIMEOUT_MS);
  // JSON bodies as sent or gzip-compressed, within BODY_LIMIT_BYTES either way; other codings: 415.
  installJsonBodies(app, config);

  app.setValidatorCompiler(validatorCompiler);
  const strictSerializer = createSerializerCompiler();
  app.setSerializerCompiler((route) => {
    const serialize = strictSerializer(route as Parameters<typeof strictSerializer>[0]);
    if (responseValidation === 'strict') return serialize;
    return (data) => {
      try {
        return serialize(data);
      } catch (err) {
        app.log.error({ err, method: route.method, url: route.url }, 'response does not match its schema; sent as is');
        return JSON.stringify(data);
      }
    };
  });

  installErrorHandling(app, handleError);
  logRequests(app);
  // First: security headers, CORS and the request id for every response, including those answered by a hook.
  await installHardening(app, config);
  // Before every route: the API key hooks, the security declarations and the rate limit must see them all.
  installAuth(app, { config, keys: jobService.keys });
  await installRateLimit(app, config);
  await installOpenApi(app, config);
  await extend?.(app);
  installMetrics(app, jobService);

  await app.register(healthRoutes, { jobService });
  await app.register(problemTypeRoutes);
  await app.register(jobRoutes, { prefix: '/v1', jobService, config });
  await app.register(matrixRoutes, { prefix: '/v1', matrices: jobService.matrices, idempotency: jobService.idempotency, config });
  await app.register(runRoutes, { prefix: '/v1', jobService });
  await app.register(jobFigureRoutes, { prefix: '/v1', jobService });
  await app.register(eventRoutes, { prefix: '/v1', jobService, heartbeatMs: config.SSE_HEARTBEAT_MS });
  await app.register(listEventRoutes, { prefix: '/v1', jobService, studyService, heartbeatMs: config.SSE_HEARTBEAT_MS });
  await app.register(studyRoutes, {
    prefix: '/v1',
    studyService,
    ownerOf,
    requesterOf: (request) => ownerFilterOf(request) ?? null,
    assertSamples: assertStudySamples,
    heartbeatMs: config.SSE_HEARTBEAT_MS,
    idempotency: jobService.idempotency,
  });
  await app.register(adminKeyRoutes, { prefix: '/v1', keys: jobService.keys });
  app.get('/openapi.json', { schema: { hide: true } }, (_request, reply) => reply.send(openApiDocument(app)));
  await app.register(dashboard, { root: config.DASHBOARD_DIR });
  await app.register(queueBoard, { config });

  await app.ready();
  return app;
}

/**
 * Fastify's request log, with its messages and fields, but at info only for the requests answered
 * 400 or above: two synchronous log lines per request were a tenth of the API's CPU under load
 * (docs/performance.md); the others are at debug.
 */
function logRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    request.log.debug({ req: request }, 'incoming request');
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const level = reply.statusCode >= 400 ? 'info' : 'debug';
    request.log[level]({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });
}

function withoutEmptyValues(query: ParsedUrlQuery): ParsedUrlQuery {
  for (const key of Object.keys(query)) if (query[key] === '') delete query[key];
  return query;
}
