/**
 * What BullMQ itself costs a job on this host, for the service's CPU per tiny job (bench/serviceCpu.ts): a Queue and
 * a Worker with a sandboxed processor in this process (two child processes, as the service's WORKER_CONCURRENCY), a
 * private redis-server, and `concurrency` jobs kept in flight from this process (queue.add, then the worker's
 * 'completed' event). The processor spins for `--spin-ms` of CPU, standing in for the computation. After a warm-up,
 * prints the CPU per job of this process (producer and the worker's parent side), the children and Redis, from /proc,
 * and Redis's commands a job (INFO commandstats, BullMQ's scripts' own included: the service's are in serviceCpu.ts').
 *
 *   node --import tsx bench/bullmqFloor.ts [--jobs 3000] [--concurrency 32] [--spin-ms 0] [--warmup-jobs 1000]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import { childPids, processTicks, TICKS_PER_SECOND } from './machineProbe.js';
import { commandCalls, commandsLine, commandsPerJob } from './redisCommands.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '32' },
    'spin-ms': { type: 'string', default: '0' },
    'warmup-jobs': { type: 'string', default: '1000' },
  },
});
process.env.BULLMQ_FLOOR_SPIN_MS = values['spin-ms'];

const redis = await startEmbeddedRedis();
const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
const queue = new Queue<{ seq: number }>('floor', { connection });
const worker = new Worker<{ seq: number }>('floor', new URL('./bullmqFloorProcessor.ts', import.meta.url), {
  connection,
  concurrency: 2,
  useWorkerThreads: false,
  removeOnComplete: { count: 1000 },
});
await worker.waitUntilReady();
const waiting = new Map<string, () => void>();
worker.on('completed', (job) => {
  waiting.get(job.id!)?.();
  waiting.delete(job.id!);
});

let seq = 0;
async function run(jobs: number, concurrency: number): Promise<number> {
  const start = performance.now();
  let submitted = 0;
  const client = async (): Promise<void> => {
    while (submitted < jobs) {
      submitted++;
      const job = await queue.add('floor', { seq: ++seq });
      await new Promise<void>((resolve) => waiting.set(job.id!, resolve));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return (performance.now() - start) / 1000;
}

try {
  const concurrency = Number(values.concurrency);
  await run(Number(values['warmup-jobs']), concurrency);
  // The sandboxed children (not redis-server, nor tsx's esbuild service).
  const children = childPids(process.pid).filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node');
  const read = (): { self: number; children: number; redis: number } => ({
    self: processTicks(process.pid),
    children: children.reduce((sum, pid) => sum + processTicks(pid), 0),
    redis: processTicks(redis.pid),
  });
  const redisUrl = `redis://127.0.0.1:${redis.port}`;
  const callsBefore = await commandCalls(redisUrl);
  const before = read();
  const jobs = Number(values.jobs);
  const seconds = await run(jobs, concurrency);
  const after = read();
  const commands = commandsPerJob(callsBefore, await commandCalls(redisUrl), jobs);
  const ms = (key: 'self' | 'children' | 'redis'): string => (((after[key] - before[key]) * 1000) / TICKS_PER_SECOND / jobs).toFixed(2);
  console.log(
    `${jobs} jobs at ${concurrency} in flight, processor spinning ${values['spin-ms']} ms: ${(jobs / seconds).toFixed(0)} jobs/s; ` +
      `CPU per job: producer + worker ${ms('self')} ms, ${children.length} sandboxed children ${ms('children')} ms, redis ${ms('redis')} ms`,
  );
  console.log(commandsLine(commands));
} finally {
  await worker.close();
  await queue.close();
  await redis.stop();
}
