/**
 * An advise job at scale through the HTTP API, beside an analyze job of the same system, as a user would run them,
 * in a process of its own: start the service (bench/service.ts, NUMERIC_BACKEND as given), upload a 2-D Poisson
 * matrix (Matrix Market text streamed), then run an analyze job and an advise job on m contiguous strips, one after
 * the other, each followed to its end. Reports each job's wall time as the client saw it, the advise job's against
 * the analyze job's (issue 25's scale target: within 2x one analysis), the service tree's peak resident set during
 * each, and the advice (the candidates' kappa(S), the best).
 *
 *   node --import tsx bench/httpAdvise.ts [--backend native|typescript] [--n 1000000] [--m 100] [--timeout-seconds 3600] [--phases]
 *     [--reads K] [--skip-analyze]
 * Prints its progress lines, then one JSON report (the last line) on stdout. With --phases the jobs' documents are read
 * every 200 ms (else every second) and each change of status or phase is a progress line with the seconds since the
 * job's submission: where the job's time goes as a client sees it; the last, the read of the finished document and
 * what it took. With --reads K the finished advise job's document (its five candidates' assignments: ~15 MB at
 * n = 10^6) is then read K more times, one after the other, as a client polling it would: each read's wall time and
 * the service tree's CPU per read (API, Redis; the worker is idle by then). --skip-analyze leaves the analyze job out.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { writeMatrixMarket } from './matrixMarketFile.js';
import { treeCpuTicks } from './machineProbe.js';
import { CACHE, log } from './processes.js';
import { request, runJobOverHttp, startService, uploadMatrixMarket } from './service.js';

interface JobDocument {
  status: string;
  progress?: { phase: string; fraction?: number } | null;
  createdAt?: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  backend?: string | null;
  error?: { detail?: string };
  result?: {
    analysis?: { conditioning?: { kappaS?: number } };
    advice?: { best: string; givenRatio: number; summary: string; candidates: { strategy: string; kappaS: number | null }[] };
  };
}

const between = (from: string | null | undefined, to: string | null | undefined): number | null =>
  from && to ? (Date.parse(to) - Date.parse(from)) / 1e3 : null;

interface JobReport {
  status: string;
  backend: string | null;
  seconds: number;
  /** From the job's creation to a worker's start, and from its start to its end, as the job document has them. */
  queuedSeconds: number | null;
  workerSeconds: number | null;
  peakServiceRssBytes: number | null;
  error: string | null;
}

/**
 * `count` reads of a finished job's document, one after the other: each read's wall time (to the body parsed, as a
 * client has it) and the service tree's CPU per read (clock ticks of /proc, 10 ms each, over all the reads).
 */
async function timeReads(
  baseUrl: string,
  id: string,
  count: number,
  servicePid: number | undefined,
): Promise<{ count: number; bytes: number; wallMs: number[]; medianWallMs: number; serviceCpuMsPerRead: number | null }> {
  const wallMs: number[] = [];
  let bytes = 0;
  const ticksBefore = servicePid ? treeCpuTicks(servicePid) : null;
  for (let k = 0; k < count; k++) {
    const t0 = performance.now();
    const response = await request(`GET /v1/jobs/${id}`, `${baseUrl}/v1/jobs/${id}`);
    const text = await response.text();
    JSON.parse(text);
    wallMs.push(performance.now() - t0);
    bytes = Buffer.byteLength(text);
  }
  const ticksAfter = servicePid ? treeCpuTicks(servicePid) : null;
  const sorted = [...wallMs].sort((a, b) => a - b);
  const serviceCpuMsPerRead = ticksBefore !== null && ticksAfter !== null ? ((ticksAfter - ticksBefore) * 10) / count : null;
  log(
    `  http advise: ${count} reads of the finished document (${(bytes / 2 ** 20).toFixed(1)} MiB): median ${sorted[count >> 1].toFixed(0)} ms, ` +
      `service CPU ${serviceCpuMsPerRead?.toFixed(0) ?? '?'} ms a read`,
  );
  return { count, bytes, wallMs, medianWallMs: sorted[count >> 1], serviceCpuMsPerRead };
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      backend: { type: 'string', default: 'native' },
      n: { type: 'string', default: '1000000' },
      m: { type: 'string', default: '100' },
      'timeout-seconds': { type: 'string', default: '3600' },
      phases: { type: 'boolean', default: false },
      reads: { type: 'string', default: '0' },
      'skip-analyze': { type: 'boolean', default: false },
    },
  });
  const n = Number(args.n);
  const m = Number(args.m);
  const A = poisson2d(Math.round(Math.sqrt(n)));
  const file = join(CACHE, `httpsolve-poisson-n${A.rows}.mtx`);
  writeMatrixMarket(A, file);
  const service = await startService(
    { LOG_LEVEL: 'warn', NUMERIC_BACKEND: args.backend, JOB_TIMEOUT_MS: String(Number(args['timeout-seconds']) * 1000) },
    `service-httpadvise-${args.backend}.log`,
  );
  const report: Record<string, unknown> = { n: A.rows, m, nnz: A.rowPtr[A.rows], uploadBytes: statSync(file).size, backend: args.backend };
  const timed = async (request: unknown): Promise<{ id: string; job: JobDocument; report: JobReport }> => {
    const t0 = performance.now();
    let last = '';
    const onRead = (job: JobDocument, readMs: number): void => {
      const now = `${job.status} ${job.progress?.phase ?? ''}`;
      const finished = job.status !== 'queued' && job.status !== 'running';
      if (now !== last || finished)
        log(
          `    ${((performance.now() - t0) / 1e3).toFixed(1)} s ${now} ${(job.progress?.fraction ?? 0).toFixed(2)} (read in ${readMs.toFixed(0)} ms)`,
        );
      last = now;
    };
    const { id, job, peakRssBytes } = await runJobOverHttp<JobDocument>(service, request, args.phases ? { pollMs: 200, onRead } : {});
    const seconds = (performance.now() - t0) / 1e3;
    return {
      id,
      job,
      report: {
        status: job.status,
        backend: job.backend ?? null,
        seconds,
        queuedSeconds: between(job.createdAt, job.startedAt),
        workerSeconds: between(job.startedAt, job.finishedAt),
        peakServiceRssBytes: peakRssBytes || null,
        error: job.error?.detail ?? null,
      },
    };
  };
  try {
    const t0 = performance.now();
    const matrixId = await uploadMatrixMarket(service.baseUrl, file);
    report.uploadSeconds = (performance.now() - t0) / 1e3;
    log(`  http advise: uploaded n = ${A.rows} in ${(report.uploadSeconds as number).toFixed(1)} s`);
    const matrix = { format: 'stored', id: matrixId };
    const analyze = args['skip-analyze'] ? null : await timed({ type: 'analyze', matrix, partition: { machines: m } });
    if (analyze) {
      report.analyze = { ...analyze.report, kappaS: analyze.job.result?.analysis?.conditioning?.kappaS ?? null };
      log(`  http advise: analyze job ${analyze.report.status} in ${analyze.report.seconds.toFixed(1)} s`);
    }
    const advise = await timed({ type: 'advise', matrix, partition: { machines: m } });
    const advice = advise.job.result?.advice;
    report.advise = {
      ...advise.report,
      best: advice?.best ?? null,
      givenRatio: advice?.givenRatio ?? null,
      summary: advice?.summary ?? null,
      candidates: advice?.candidates.map(({ strategy, kappaS }) => ({ strategy, kappaS })) ?? null,
    };
    report.adviseOverAnalyze = analyze ? advise.report.seconds / analyze.report.seconds : null;
    log(`  http advise: advise job ${advise.report.status} in ${advise.report.seconds.toFixed(1)} s`);
    const reads = Number(args.reads);
    if (reads > 0) report.reads = await timeReads(service.baseUrl, advise.id, reads, service.process.pid);
  } catch (error) {
    report.error = (error as Error).message;
  } finally {
    await service.stop();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
