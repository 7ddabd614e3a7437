/**
 * The sandboxed BullMQ processor of study chunks: BullMQ runs this module in child processes of a
 * worker (reused from chunk to chunk) and calls the default export for each child job of a study.
 * It computes the chunk's samples (src/solvers/studies/sampler.ts), returning to the event loop
 * every few samples (so the child keeps answering BullMQ and notices a cancel), and stores their
 * outcomes in one write (StudyStore.recordChunk). A study no longer active (cancelled, deleted)
 * makes it stop and store nothing.
 *
 * A chunk runs on one core (OpenBLAS on one thread): parallelism comes from running chunks on
 * several processes (STUDY_WORKER_CONCURRENCY per worker, and any number of workers).
 */
import type { SandboxedJob } from 'bullmq';
import type { Config } from '../../config.js';
import { nativeBlas, useBackend } from '../../solvers/linalg/backend.js';
import { setSolverThreads } from '../../solvers/parallel/threads.js';
import type { StudyPlan } from '../../solvers/studies/plan.js';
import { computeGroupSample, type SampleOutcome } from '../../solvers/studies/sampler.js';
import { computeStoredMatrixSample } from '../../solvers/studies/storedMatrixSampler.js';
import { createResilientConnection } from '../store/redisConnection.js';
import { WORKER_CONFIG_ENV } from '../workerConfig.js';
import { encodeChunkOutcome } from './chunkOutcome.js';
import { planOfRecord } from './studyPlan.js';
import type { StudyChunkData } from './studyQueues.js';
import { StudyStore } from './studyStore.js';

// A forked child outlives a SIGKILLed worker unless it leaves when the IPC channel closes: ../sandboxGuard.ts, preloaded.

const config = JSON.parse(process.env[WORKER_CONFIG_ENV] ?? 'null') as (Config & { REDIS_URL: string }) | null;
if (!config?.REDIS_URL) throw new Error(`${WORKER_CONFIG_ENV} is not set: this module runs only as a BullMQ sandboxed processor`);
if (useBackend(config.NUMERIC_BACKEND) === 'native') nativeBlas()?.setThreads(1);
setSolverThreads(1);

const store = new StudyStore(
  createResilientConnection(config.REDIS_URL, 'lss-study-chunk'),
  config.KEY_PREFIX,
  config.STUDY_QUEUE_NAME,
  config.JOB_TTL_SECONDS,
);
/** Plans of the studies this child has worked on (a chunk of the same study follows another). */
const plans = new Map<string, StudyPlan>();

/** Longest stretch of computation between two returns to the event loop. */
const SLICE_MS = 50;

export interface ChunkReturn {
  samples: number;
  stored: boolean;
  /** Milliseconds spent computing the samples: the rest of the chunk's time in BullMQ is its fixed cost (bench/studies.ts). */
  computeMs?: number;
}

export default async function processChunk(job: SandboxedJob<StudyChunkData>): Promise<ChunkReturn> {
  const { id, chunk: chunkIndex } = job.data;
  const stored = await store.get(id);
  if (!stored || (stored.status !== 'queued' && stored.status !== 'running')) return { samples: 0, stored: false };
  let plan = plans.get(id);
  if (!plan) {
    plan = planOfRecord(stored.record, config!);
    if (plans.size > 16) plans.clear();
    plans.set(id, plan);
  }
  await store.markRunning(id);
  const chunk = plan.chunks[chunkIndex];
  const group = plan.groups[chunk.group];
  // A study over a stored matrix reads the study's copy of it once per chunk (StudyStore.copyMatrix).
  const matrix = plan.definition.matrix ? await store.matrix(id, plan.definition.matrix) : null;
  if (plan.definition.matrix && !matrix) {
    if (!['queued', 'running'].includes((await store.status(id)) ?? '')) return { samples: 0, stored: false };
    throw new Error(`The copy of matrix '${plan.definition.matrix.id}' of study '${id}' is missing`);
  }
  const samples: SampleOutcome[][] = [];
  const computeStart = performance.now();
  let sliceStart = Date.now();
  for (let s = chunk.start; s < chunk.end; s++) {
    samples.push(matrix ? computeStoredMatrixSample(plan.definition, group, s, matrix) : computeGroupSample(plan.definition, group, s));
    if (Date.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      const status = await store.status(id);
      if (status !== 'queued' && status !== 'running') return { samples: samples.length, stored: false };
      sliceStart = Date.now();
    }
  }
  const computeMs = performance.now() - computeStart;
  const written = await store.recordChunk(id, chunkIndex, encodeChunkOutcome(chunk.start, samples), samples.length * group.points.length);
  return { samples: samples.length, stored: written, computeMs };
}
