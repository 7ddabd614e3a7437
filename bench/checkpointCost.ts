/**
 * What checkpoints cost a run (issue 23 §3: under 2% of a run's time at the default interval), in
 * one process of its own: the same solve run through computeJob, as the sandboxed processor runs it,
 * with checkpoints every `--interval-ms` (default: CHECKPOINT_INTERVAL_MS's default, 30 s) written to
 * a private redis-server through the processor's own path (CheckpointWriter, JobStore.saveCheckpoint),
 * and without checkpoints. Each run is long enough for `--seconds` (default 65: two checkpoints at
 * the default interval); the ratio is the run's wallTimeMs with checkpoints over without, median
 * against median over `--rounds` interleaved rounds (their order alternating), and the same for the
 * process's CPU time. The analysis is computed once and handed to both sides as a checkpoint's
 * (untimed: the runs are what is compared).
 * On a shared machine two runs of a minute differ by more than the checkpoints' cost (other processes
 * take cores: 50 s and 115 s for the same D-HBM run, one after the other), so what decides the target
 * is the checkpoints' own cost, measured: one checkpoint alone as computeJob takes it (the run's
 * snapshot and its encoding, on the run's thread, then the Redis write, asynchronous, counted here as
 * if it held the run up), median of 10, the encoding taking the longer of that and its time within
 * the runs (once an interval: cold), and the ratio it implies, 1 + (all of it) / interval.
 *
 *   node --import tsx bench/checkpointCost.ts <typescript|native> [--n 2000] [--m 10]
 *     [--algorithms apc,dhbm] [--seconds 65] [--interval-ms 30000] [--rounds 1]
 * Prints one CheckpointCostReport JSON on stdout.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { CheckpointWriter } from '../src/jobs/checkpoints.js';
import { computeJob, type ComputeInput } from '../src/jobs/computeJob.js';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import { newJobId } from '../src/jobs/jobId.js';
import { encodeCheckpoint, type JobCheckpoint } from '../src/jobs/store/checkpointCodec.js';
import { JobStore } from '../src/jobs/store/jobStore.js';
import { createResilientConnection } from '../src/jobs/store/redisConnection.js';
import {
  analyze,
  buildDistributedSystem,
  createProblem,
  DEFAULT_TRACE_CAP,
  generateMatrix,
  spectralDataOf,
  type AlgorithmId,
} from '../src/solvers/index.js';
import { startRun } from '../src/solvers/runner/runAlgorithm.js';
import { selectBackend, type BackendName } from './backends.js';

export interface CheckpointCostCase {
  algorithm: AlgorithmId;
  /** e.g. gaussian-n2000-m10 (dense). */
  problem: string;
  iterations: number;
  rounds: number;
  /** The runs' wallTimeMs, in round order. */
  withCheckpointsMs: number[];
  withoutCheckpointsMs: number[];
  /** Median with / median without. */
  ratio: number;
  /** The same for the process's CPU time (user + system, every thread) over each whole computeJob. */
  cpuRatio: number;
  /** Encoding time of the checkpoints of the runs with them, as they ran (ms, mean). */
  inRunEncodeMs: number;
  /** Most checkpoints one run with them wrote (a run slowed down by other load writes more). */
  checkpointsPerRun: number;
  /** Bytes of one checkpoint. */
  checkpointBytes: number;
  /** One checkpoint alone, median of 10: the run's snapshot and its encoding (on the run's thread), then the Redis write. */
  snapshotMs: number;
  encodeMs: number;
  writeMs: number;
  /** One checkpoint: snapshotMs + the larger of encodeMs and inRunEncodeMs (cold, once an interval) + writeMs. */
  checkpointMs: number;
  /** 1 + checkpointMs / intervalMs: a run's time with checkpoints at this interval over without. */
  impliedRatio: number;
}

export interface CheckpointCostReport {
  backend: BackendName;
  intervalMs: number;
  cases: CheckpointCostCase[];
  error: string | null;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function main(): Promise<void> {
  const { values: args, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      n: { type: 'string', default: '2000' },
      m: { type: 'string', default: '10' },
      algorithms: { type: 'string', default: 'apc,dhbm' },
      seconds: { type: 'string', default: '65' },
      'interval-ms': { type: 'string', default: String(loadConfig({}).CHECKPOINT_INTERVAL_MS) },
      rounds: { type: 'string', default: '1' },
    },
  });
  const backend = positionals[0] as BackendName;
  if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: checkpointCost.ts <typescript|native> [options]');
  selectBackend(backend);
  const [n, m, seconds, intervalMs, rounds] = [args.n, args.m, args.seconds, args['interval-ms'], args.rounds].map(Number);
  const report: CheckpointCostReport = { backend, intervalMs, cases: [], error: null };

  const spec = { generator: 'gaussian', n, mean: 1, std: 1, seed: 2024 + n + m } as const;
  const A = generateMatrix(spec);
  const partition = { machines: m };
  const system = buildDistributedSystem(createProblem({ A, partition }));
  const analysis = analyze(system);
  const spectral = spectralDataOf(analysis);
  const base: JobCheckpoint = { analysis, runs: [], current: null };

  const redis = await startEmbeddedRedis();
  const connection = createResilientConnection(redis.url, 'bench-checkpoints');
  const store = new JobStore(connection, 'bench', 'checkpoints', 3600);
  const log = pino({ level: 'warn' });
  try {
    // A running job document: checkpoints are written only while their job runs.
    const id = newJobId();
    await store.create(
      {
        id,
        type: 'solve',
        n,
        m,
        algorithms: [],
        options: { tolerance: 1e-300, maxIterations: 1, parameters: {} },
        input: { format: 'generator', spec },
        hasRhs: false,
        storage: 'dense',
        createdAt: new Date().toISOString(),
        partition: { kind: 'machines', m, sizes: Array.from({ length: m }, (_, machine) => Math.floor((n + m - 1 - machine) / m)) },
        labels: {},
        digest: null,
      },
      { matrix: null, rhs: null, assignment: system.partition.assignment },
    );
    const started = await store.begin(id, new Date().toISOString(), { maxN: n, maxNSparse: n });
    if (started.state !== 'running') throw new Error(`the bench's job document is ${started.state}`);

    for (const algorithm of args.algorithms.split(',') as AlgorithmId[]) {
      const input = (iterations: number): ComputeInput => ({
        type: 'solve',
        matrix: { storage: 'dense', A },
        rhs: null,
        partition: system.partition,
        algorithms: [algorithm],
        // A tolerance no run reaches: every run makes exactly `iterations` steps.
        options: { tolerance: 1e-300, maxIterations: iterations, parameters: {} },
      });
      const run = async (
        iterations: number,
        checkpointing: boolean,
      ): Promise<{ ms: number; cpuMs: number; saves: number; bytes: number; encodeMs: number }> => {
        const writer = new CheckpointWriter((bytes) => store.saveCheckpoint(id, bytes), log);
        let saves = 0;
        let encodeMs = 0;
        const cpu = process.cpuUsage();
        const outcome = await computeJob(input(iterations), {
          signal: new AbortController().signal,
          onProgress: () => undefined,
          traceCap: DEFAULT_TRACE_CAP,
          checkpoints: {
            resumeFrom: base,
            intervalMs: checkpointing ? intervalMs : 0,
            save: (checkpoint) => {
              saves++;
              const t0 = performance.now();
              writer.save(checkpoint);
              encodeMs += performance.now() - t0;
            },
            discarded: (reason) => {
              throw new Error(reason);
            },
          },
        });
        await writer.flush();
        const used = process.cpuUsage(cpu);
        const summary = outcome.result!.runs[algorithm]!;
        if (summary.iterations !== iterations) throw new Error(`${algorithm} made ${summary.iterations} of ${iterations} iterations`);
        return { ms: summary.wallTimeMs, cpuMs: (used.user + used.system) / 1000, saves, bytes: writer.lastBytes, encodeMs };
      };

      // Iterations for `seconds`, from a probe of at least a second (the first iterations of a run, its threads starting, cost more).
      let probeIterations = 200;
      let probe = await run(probeIterations, false);
      while (probe.ms < 3000) {
        probeIterations *= 4;
        probe = await run(probeIterations, false);
      }
      const iterations = Math.max(200, Math.round((seconds * 1000 * probeIterations) / probe.ms));
      process.stderr.write(`${algorithm}: ${iterations} iterations per run (${(probe.ms / probeIterations).toFixed(3)} ms each)\n`);
      const withMs: number[] = [];
      const withoutMs: number[] = [];
      const withCpuMs: number[] = [];
      const withoutCpuMs: number[] = [];
      // Over every run with checkpoints.
      const written = { most: 0, saves: 0, bytes: 0, encodeMs: 0 };
      for (let round = 0; round < rounds; round++) {
        for (const checkpointing of round % 2 === 0 ? [true, false] : [false, true]) {
          const result = await run(iterations, checkpointing);
          (checkpointing ? withMs : withoutMs).push(result.ms);
          (checkpointing ? withCpuMs : withoutCpuMs).push(result.cpuMs);
          if (checkpointing) {
            written.most = Math.max(written.most, result.saves);
            written.saves += result.saves;
            written.encodeMs += result.encodeMs;
            if (result.saves > 0) written.bytes = result.bytes;
          }
          process.stderr.write(
            `  round ${round + 1}, ${checkpointing ? 'with' : 'without'} checkpoints: ${(result.ms / 1000).toFixed(2)} s ` +
              `(CPU ${(result.cpuMs / 1000).toFixed(2)} s${checkpointing ? `, ${result.saves} checkpoints` : ''})\n`,
          );
        }
      }

      // One checkpoint alone, as computeJob takes it, on a run part-way through.
      const resumable = startRun(system, algorithm, spectral, { tolerance: 1e-300, maxIterations: 1_000_000, traceCap: DEFAULT_TRACE_CAP });
      for (let k = 0; k < 100; k++) resumable.work.next();
      const snapshotMs: number[] = [];
      const encodeMs: number[] = [];
      const writeMs: number[] = [];
      for (let k = 0; k < 10; k++) {
        const t0 = performance.now();
        const current = resumable.snapshot();
        const t1 = performance.now();
        const bytes = encodeCheckpoint({ ...base, current });
        const t2 = performance.now();
        await store.saveCheckpoint(id, bytes);
        snapshotMs.push(t1 - t0);
        encodeMs.push(t2 - t1);
        writeMs.push(performance.now() - t2);
      }
      resumable.work.return(undefined as never);

      const inRunEncodeMs = written.saves === 0 ? 0 : written.encodeMs / written.saves;
      const checkpointMs = median(snapshotMs) + Math.max(median(encodeMs), inRunEncodeMs) + median(writeMs);
      report.cases.push({
        algorithm,
        problem: `gaussian-n${n}-m${m}`,
        iterations,
        rounds,
        withCheckpointsMs: withMs,
        withoutCheckpointsMs: withoutMs,
        ratio: median(withMs) / median(withoutMs),
        cpuRatio: median(withCpuMs) / median(withoutCpuMs),
        inRunEncodeMs,
        checkpointsPerRun: written.most,
        checkpointBytes: written.bytes,
        snapshotMs: median(snapshotMs),
        encodeMs: median(encodeMs),
        writeMs: median(writeMs),
        checkpointMs,
        impliedRatio: 1 + checkpointMs / intervalMs,
      });
      const c = report.cases[report.cases.length - 1];
      process.stderr.write(
        `  ${algorithm}: ratio ${c.ratio.toFixed(4)}, CPU ${c.cpuRatio.toFixed(4)} (${c.checkpointsPerRun} checkpoints of ${c.checkpointBytes} bytes ` +
          `per run, encoded in ${c.inRunEncodeMs.toFixed(2)} ms each); one checkpoint: snapshot ${c.snapshotMs.toFixed(2)} ms, encoding ` +
          `${c.encodeMs.toFixed(2)} ms, write ${c.writeMs.toFixed(2)} ms; implied ratio ${c.impliedRatio.toFixed(6)}\n`,
      );
    }
  } catch (error) {
    report.error = error instanceof Error ? error.message : String(error);
  } finally {
    connection.disconnect();
    await redis.stop();
  }
  for (const c of report.cases) {
    process.stdout.write(
      `  checkpoints (${backend}, ${c.algorithm}, ${c.problem}, every ${intervalMs} ms): ${c.impliedRatio.toFixed(6)} x the run's time ` +
        `from one checkpoint's cost (${c.checkpointMs.toFixed(2)} ms, ${c.checkpointBytes} bytes); runs with / without: ` +
        `${c.ratio.toFixed(4)} wall, ${c.cpuRatio.toFixed(4)} CPU (${c.rounds} round(s), ${c.checkpointsPerRun} checkpoints per run)\n`,
    );
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
