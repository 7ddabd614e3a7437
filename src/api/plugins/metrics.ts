/**
 * GET /metrics in the Prometheus text format (prom-client, one registry per app): HTTP requests by
 * method, route and status; queue depth by state (read from Redis at scrape time) and whether Redis
 * answered; job run times and end-to-end latencies (observed when jobs finish, from
 * JobService.onFinished).
 *
 * With Redis unreachable the scrape still succeeds, at once: a failed scrape would read as the
 * process being down (`up == 0`), and the HTTP and job metrics it holds are still true. Redis'
 * state is its own gauge, as exporters do (`redis_up`, `mysql_up`), and the queue-depth samples
 * are left out rather than repeated from an older scrape.
 */
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import { StoreUnavailableError } from '../../jobs/errors.js';
import { storeCall, withTimeout } from '../../jobs/store/redisConnection.js';
import type { JobService } from '../../jobs/types.js';
import { problemResponses } from '../schemas/problem.js';

/**
 * Longest wait on Redis for a scrape's queue depth. Unreachable, Redis fails at once; stalled (a frozen process, a full
 * disk), a command waits for the 15 s command timeout, past Prometheus' default scrape timeout (10 s): the scrape
 * failed, which this route exists to avoid.
 */
const QUEUE_SAMPLE_WAIT_MS = 2000;

const JOB_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export function installMetrics(app: FastifyInstance, jobService: JobService): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'lss_' });

  const requests = new Counter({
    name: 'lss_http_requests_total',
    help: 'HTTP requests by method, route (pattern) and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'lss_http_request_duration_seconds',
    help: 'HTTP request durations (to the end of the response; SSE streams excluded).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const log = app.log;
  const queueJobs = new Gauge({
    name: 'lss_queue_jobs',
    help:
      'Jobs in the queue by BullMQ state (waiting, active, delayed, completed, failed...), read at scrape time; ' +
      'absent when Redis is unreachable.',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  const redisUp = new Gauge({
    name: 'lss_redis_up',
    help: '1 when Redis answered this scrape (the queue depth was read), 0 when it was unreachable.',
    registers: [registry],
  });
  let redisWasUp = true;
  /** Read the queue depth for this scrape; fails fast when Redis is unreachable (see JobService). */
  const sampleQueue = async (): Promise<void> => {
    queueJobs.reset();
    try {
      const counts = await storeCall(() => withTimeout(jobService.queueCounts(), QUEUE_SAMPLE_WAIT_MS));
      for (const [state, count] of Object.entries(counts)) queueJobs.set({ state }, count);
      redisUp.set(1);
      if (!redisWasUp) log.info('queue depth available again for /metrics');
      redisWasUp = true;
    } catch (err) {
      redisUp.set(0);
      if (!(err instanceof StoreUnavailableError)) log.error({ err }, 'queue depth not available for /metrics');
      else if (redisWasUp) log.warn({ err }, 'Redis unreachable: /metrics reports lss_redis_up 0 and no queue depth');
      redisWasUp = false;
    }
  };
  const runSeconds = new Histogram({
    name: 'lss_job_duration_seconds',
    help: 'Run time of finished jobs, from the start of their last attempt to their end.',
    labelNames: ['type', 'status'] as const,
    buckets: JOB_SECONDS_BUCKETS,
    registers: [registry],
  });
  const latencySeconds = new Histogram({
    name: 'lss_job_latency_seconds',
    help: 'End-to-end time of finished jobs, from creation to their end (queueing included).',
    labelNames: ['type', 'status'] as const,
    buckets: JOB_SECONDS_BUCKETS,
    registers: [registry],
  });

  const stopObserving = jobService.onFinished((job) => {
    if (!job.finishedAt) return;
    const end = Date.parse(job.finishedAt);
    const labels = { type: job.type, status: job.status };
    latencySeconds.observe(labels, (end - Date.parse(job.createdAt)) / 1000);
    if (job.startedAt) runSeconds.observe(labels, Math.max(0, end - Date.parse(job.startedAt)) / 1000);
  });
  app.addHook('onClose', (_instance, hookDone) => {
    stopObserving();
    hookDone();
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status_code: String(reply.statusCode) });
    if (!route.endsWith('/events')) requestSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description: [
          'Prometheus text exposition format (text/plain; version=0.0.4).',
          'Answers 200 also while Redis is unreachable or stalled, within 2 s: `lss_redis_up` is then 0 and the `lss_queue_jobs`',
          'samples are absent (the HTTP and job metrics are still reported), so alert on `lss_redis_up == 0`, not on failed',
          'scrapes. With AUTH_MODE=keys the admin key is checked in Redis first: 503 `store-unavailable` when it cannot be.',
        ].join(' '),
        response: { 200: { description: 'The metrics.', content: { 'text/plain': { schema: z.string() } } }, ...problemResponses(503) },
      },
    },
    async (_request, reply) => {
      await sampleQueue();
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    },
  );
}
