/**
 * Service CPU per tiny job, per process (issue: the end-to-end target of docs/performance.md):
 * starts the service as the end-to-end bench does (bench/service.ts: dist/src/main.js, a private
 * redis-server), runs bench/load.ts once to warm it (JIT, the sandboxed processor children), then
 * once more between two readings of /proc/<pid>/stat (utime + stime) of every process of the
 * service's tree, and Redis's INFO commandstats around the same run.
 *
 *   node --import tsx bench/serviceCpu.ts [--jobs 1500] [--concurrency 32] [--warmup-jobs 3000] [--env '{"LOG_LEVEL":"warn"}'] [--tsx]
 * Prints the CPU per finished job of the API process (with the BullMQ worker's parent side), the
 * sandboxed processor children together, and Redis (each also its kernel part), the Redis commands
 * per job, and one JSON line. The load generator runs in a process of its own, not counted; its CPU per job is printed
 * beside the service's. It measures the service
 * as `npm start` runs it (built first: dist/src/main.js), or with --tsx from src/ under tsx.
 */
import { parseArgs } from 'node:util';
import type { LoadReport } from './load.js';
import { runLoadGenerator, WARMUP_JOBS } from './endToEnd.js';
import { processTicks, TICKS_PER_SECOND, treeProcesses } from './machineProbe.js';
import { type ChildResult, lastJson } from './processes.js';
import { commandCalls, commandsLine, commandsPerJob } from './redisCommands.js';
import { buildService, startService } from './service.js';

type Role = 'api' | 'sandbox' | 'redis';
interface ProcessCpu {
  role: Role;
  ticks: number;
  kernelTicks: number;
  /** Of `ticks`, the main thread's (JavaScript); the rest is V8's collector and compiler threads, the solver's threads. */
  mainTicks: number;
  cmdline: string;
}

/** Every process of the service's tree with its role and CPU so far. */
function readTree(root: number): Map<number, ProcessCpu> {
  const tree = new Map<number, ProcessCpu>();
  for (const [pid, p] of treeProcesses(root) ?? []) {
    const role: Role = pid === root ? 'api' : p.cmdline.includes('redis') ? 'redis' : 'sandbox';
    tree.set(pid, {
      role,
      ticks: p.userTicks + p.kernelTicks,
      kernelTicks: p.kernelTicks,
      mainTicks: processTicks(pid, pid),
      cmdline: p.cmdline,
    });
  }
  return tree;
}

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '32' },
    'warmup-jobs': { type: 'string', default: String(WARMUP_JOBS) },
    env: { type: 'string', default: '{}' },
    tsx: { type: 'boolean', default: false },
  },
});
const concurrency = Number(values.concurrency);
/** The bench's end-to-end job (bench/run.ts: analyze, Gaussian n = 50 over m = 5 machines), no warm-up of load.ts's own. */
const load = (baseUrl: string, jobs: number): Promise<ChildResult> =>
  runLoadGenerator(baseUrl, { jobs, seconds: 120, concurrency, n: 50, m: 5, warmup: 0 });

if (!values.tsx) buildService();
const service = await startService(JSON.parse(values.env) as NodeJS.ProcessEnv, 'serviceCpu.log', { built: !values.tsx });
try {
  const pid = service.process.pid!;
  await load(service.baseUrl, Number(values['warmup-jobs']));
  const redisProcess = [...readTree(pid).values()].find((p) => p.role === 'redis');
  const port = redisProcess && /(?:127\.0\.0\.1:|--port )(\d+)/.exec(redisProcess.cmdline)?.[1];
  const redisUrl = port ? `redis://127.0.0.1:${port}` : null;
  const callsBefore = redisUrl ? await commandCalls(redisUrl) : null;
  const before = readTree(pid);
  const result = await load(service.baseUrl, Number(values.jobs));
  const after = readTree(pid);
  const callsAfter = redisUrl ? await commandCalls(redisUrl) : null;
  const report = lastJson<LoadReport>(result, 'load.ts');
  if ('error' in report) throw new Error(report.error);
  const jobs = report.succeeded + report.failed;
  const msPerJob = (ticks: number): number => (ticks * 1000) / TICKS_PER_SECOND / jobs;
  const perRole: Record<Role, { ms: number; kernelMs: number; otherThreadsMs: number }> = {
    api: { ms: 0, kernelMs: 0, otherThreadsMs: 0 },
    sandbox: { ms: 0, kernelMs: 0, otherThreadsMs: 0 },
    redis: { ms: 0, kernelMs: 0, otherThreadsMs: 0 },
  };
  for (const [p, now] of after) {
    const then = before.get(p);
    const ticks = now.ticks - (then?.ticks ?? 0);
    perRole[now.role].ms += msPerJob(ticks);
    perRole[now.role].kernelMs += msPerJob(now.kernelTicks - (then?.kernelTicks ?? 0));
    perRole[now.role].otherThreadsMs += msPerJob(ticks - (now.mainTicks - (then?.mainTicks ?? 0)));
  }
  const totalMs = perRole.api.ms + perRole.sandbox.ms + perRole.redis.ms;
  const commands = callsBefore && callsAfter ? commandsPerJob(callsBefore, callsAfter, jobs) : null;
  const show = (r: Role): string =>
    `${r} ${perRole[r].ms.toFixed(2)} (kernel ${perRole[r].kernelMs.toFixed(2)}, threads besides the main ${perRole[r].otherThreadsMs.toFixed(2)})`;
  console.log(
    `${jobs} jobs (${report.failed} failed), ${report.throughput.toFixed(0)} jobs/s, p50 ${report.latencyMs?.p50.toFixed(0)} ms, ` +
      `p99 ${report.latencyMs?.p99.toFixed(0)} ms at ${values.concurrency} clients`,
  );
  console.log(`service CPU per job: ${totalMs.toFixed(2)} ms = ${(['api', 'sandbox', 'redis'] as const).map(show).join(', ')}`);
  // The load generator's own process (HTTP clients, the event streams' parsing), reported beside the service's, not in it.
  const loadGeneratorMs = (report.loadCpuSeconds * 1000) / jobs;
  console.log(`load generator CPU per job: ${loadGeneratorMs.toFixed(2)} ms (its own process, not counted above)`);
  if (commands) console.log(commandsLine(commands));
  console.log(JSON.stringify({ jobs, throughput: report.throughput, totalMs, perRole, loadGeneratorMs, commands }));
} finally {
  await service.stop();
}
