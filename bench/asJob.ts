import { runCooperatively, type Work } from '../src/solvers/cooperative.js';

/**
 * Runs `work` as a job's process drives it (back to the event loop every 20 ms, ../src/jobs/computeJob.ts), with its wall
 * and CPU seconds (process.cpuUsage: every thread of this process).
 */
export async function timedAsJob<T>(work: Work<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const value = await runCooperatively(work, { sliceMs: 20, progressIntervalMs: 1000, onProgress: () => undefined });
  const { user, system } = process.cpuUsage(c0);
  return { value, wall: (performance.now() - t0) / 1e3, cpu: (user + system) / 1e6 };
}
