/**
 * `npx tsx bench/studies.ts [samples]`: the paper's Experiment 1 (preset experiment-1: 2 x 16 x 300 =
 * 9,600 sample-analyses at the default 300 samples) through the HTTP API, end to end (POST, the flow's
 * chunks on separate worker processes, the parent's aggregation, GET until it has succeeded), with 1
 * and with 2 worker processes (STUDY_WORKER_CONCURRENCY=1 each, one Redis), next to the straightforward
 * NumPy script on one core (bench/studiesReference.py). Targets: HTTP <= 1.0 x NumPy and <= 60 s; 2 workers
 * >= 1.6 x faster than 1. A small warm-up study first starts each worker's sandboxed child (a fleet's
 * children stay up between studies). Prints the figures as JSON and a table.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp } from '../src/api/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import { RedisJobService } from '../src/jobs/redisJobService.js';
import { RedisStudyService } from '../src/jobs/studies/redisStudyService.js';
import type { Study } from '../src/jobs/studies/types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SAMPLES = Number(process.argv[2] ?? 300);

function numpySeconds(): { seconds: number; analyses: number } {
  const run = spawnSync('python3', ['bench/studiesReference.py', String(SAMPLES)], {
    cwd: ROOT,
    env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`studiesReference.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { seconds: number; analyses: number };
}

async function timeStudy(workers: number): Promise<number> {
  const redis = await startEmbeddedRedis({ bin: process.env.REDIS_SERVER_BIN ?? 'redis-server' });
  const config: Config = { ...loadConfig({}), LOG_LEVEL: 'silent', REDIS_URL: redis.url };
  const logger = pino({ level: 'silent' });
  const jobService = await RedisJobService.start(config, logger);
  const studyService = await RedisStudyService.start(config, logger);
  const app = await buildApp({ config, jobService, studyService, logger });
  const children: ChildProcess[] = [];
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const chunks = new Queue(`${config.STUDY_QUEUE_NAME}-chunks`, { connection, prefix: config.KEY_PREFIX });
  try {
    for (let k = 0; k < workers; k++) {
      const env = { ...process.env, REDIS_URL: redis.url, LOG_LEVEL: 'warn', STUDY_WORKER_CONCURRENCY: '1', WORKER_CONCURRENCY: '1' };
      children.push(
        spawn(process.execPath, ['--import', 'tsx', 'src/jobs/workerMain.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] }),
      );
    }
    while ((await chunks.getWorkers()).length < workers) await new Promise((resolve) => setTimeout(resolve, 100));
    const run = async (body: object): Promise<number> => {
      const start = performance.now();
      const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
      if (created.statusCode !== 202) throw new Error(created.body);
      const id = created.json<Study>().id;
      for (;;) {
        const study = (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json<Study>();
        if (study.status === 'succeeded') return (performance.now() - start) / 1000;
        if (study.status !== 'queued' && study.status !== 'running') throw new Error(`study ${study.status}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    // Warm-up: one chunk per worker starts every sandboxed child.
    await run({ preset: 'experiment-1', samples: 25 * workers, grid: { mean: [0] } });
    return await run({ preset: 'experiment-1', samples: SAMPLES });
  } finally {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await chunks.close();
    connection.disconnect();
    await app.close();
    await studyService.close();
    await jobService.close();
    await redis.stop();
  }
}

const numpy = numpySeconds();
const one = await timeStudy(1);
const two = await timeStudy(2);
const report = {
  samples: SAMPLES,
  analyses: numpy.analyses,
  numpySeconds: numpy.seconds,
  httpOneWorkerSeconds: one,
  httpTwoWorkersSeconds: two,
  ratioToNumpy: two / numpy.seconds,
  scaling: one / two,
};
console.log(JSON.stringify(report));
console.log(
  `Experiment 1, ${numpy.analyses} analyses: NumPy (one core) ${numpy.seconds.toFixed(1)} s; HTTP, 1 worker ${one.toFixed(1)} s, 2 workers ${two.toFixed(1)} s`,
);
console.log(
  `  ratio to NumPy (2 workers) ${report.ratioToNumpy.toFixed(2)} (target <= 1.0, and <= 60 s); scaling 1 -> 2 workers ${report.scaling.toFixed(2)}x (target >= 1.6)`,
);
