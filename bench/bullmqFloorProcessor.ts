/**
 * The sandboxed processor of bench/bullmqFloor.ts: spins for BULLMQ_FLOOR_SPIN_MS of CPU (default 0), standing in
 * for a job's computation, and returns a small value.
 */
import type { SandboxedJob } from 'bullmq';

const spinMs = Number(process.env.BULLMQ_FLOOR_SPIN_MS ?? 0);

export default function spin(job: SandboxedJob<{ seq: number }>): Promise<{ seq: number; turns: number }> {
  const start = performance.now();
  let turns = 0;
  while (performance.now() - start < spinMs) turns++;
  return Promise.resolve({ seq: job.data.seq, turns });
}
