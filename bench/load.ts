/**
 * End-to-end load: many small analyze jobs against a running service over loopback HTTP, from a
 * process of its own (bench/run.ts starts the service and then this). Closed loop: `concurrency`
 * clients each submit a job (POST /v1/jobs), follow it on its event stream
 * (GET /v1/jobs/{id}/events, Server-Sent Events, no polling) until the final status, and submit
 * the next. Latency = from just before the POST to the arrival of the final status event.
 * Bounded in count (`jobs`) and time (`seconds`: no submission after it; jobs in flight are then
 * given `drainSeconds` to finish). A few warm-up jobs first (not counted) start the worker's
 * sandboxed child processes and the JIT.
 *
 *   node --import tsx bench/load.ts --base-url http://127.0.0.1:PORT [--jobs 2000] [--seconds 30]
 *        [--concurrency 32] [--n 50] [--m 5] [--warmup 20]
 * Prints one LoadReport JSON on stdout.
 */
import { setMaxListeners } from 'node:events';
import { parseArgs } from 'node:util';

export interface LoadReport {
  baseUrl: string;
  n: number;
  m: number;
  concurrency: number;
  jobLimit: number;
  secondsLimit: number;
  warmupJobs: number;
  submitted: number;
  succeeded: number;
  failed: number;
  /** Submissions answered with something other than 202 (status -> count). */
  rejected: Record<string, number>;
  /** Jobs still unfinished when the drain time ran out, or whose stream broke. */
  unfinished: number;
  /** From the first submission to the last final status, seconds. */
  windowSeconds: number;
  /** succeeded / windowSeconds. */
  throughput: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number } | null;
  /** POST /v1/jobs round trip alone (the 202), ms. */
  submitMs: { p50: number; p99: number } | null;
  stoppedBy: 'job-limit' | 'time-limit';
  /** CPU seconds this load generator process used in all (startup and warm-up included; it shares the machine with the service). */
  loadCpuSeconds: number;
}

interface Outcome {
  status: string;
  latencyMs: number;
  submitMs: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[k];
}

/** Reads an SSE stream until a `status` event with a finished status; returns that status. */
async function finalStatus(url: string, signal: AbortSignal): Promise<string> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal });
  if (response.status !== 200 || !response.body) throw new Error(`GET ${url}: ${response.status}`);
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error('event stream ended without a final status');
      buffer += decoder.decode(value, { stream: true });
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        if (!block.includes('event: status')) continue;
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .join('\n');
        const status = (JSON.parse(data) as { status: string }).status;
        if (status === 'succeeded' || status === 'failed' || status === 'cancelled') return status;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function jobBody(n: number, m: number, seed: number): string {
  return JSON.stringify({
    type: 'analyze',
    matrix: { format: 'generator', generator: 'gaussian', n, mean: 1, std: 1, seed },
    partition: { machines: m },
  });
}

/**
 * One job on a signal of its own, tied to the run's: fetch leaves its listener on the signal it is given until the
 * request is collected, so thousands of jobs on the run's signal would pile up listeners (MaxListenersExceededWarning).
 */
async function runJob(baseUrl: string, n: number, m: number, seed: number, runSignal: AbortSignal): Promise<Outcome> {
  const job = new AbortController();
  const abort = (): void => job.abort(runSignal.reason);
  if (runSignal.aborted) abort();
  else runSignal.addEventListener('abort', abort, { once: true });
  try {
    return await submitAndFollow(baseUrl, n, m, seed, job.signal);
  } finally {
    runSignal.removeEventListener('abort', abort);
  }
}

async function submitAndFollow(baseUrl: string, n: number, m: number, seed: number, signal: AbortSignal): Promise<Outcome> {
  const t0 = performance.now();
  const response = await fetch(`${baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: jobBody(n, m, seed),
    signal,
  });
  const submitMs = performance.now() - t0;
  if (response.status !== 202) {
    await response.body?.cancel();
    return { status: `http-${response.status}`, latencyMs: performance.now() - t0, submitMs };
  }
  const { id } = (await response.json()) as { id: string };
  const status = await finalStatus(`${baseUrl}/v1/jobs/${id}/events`, signal);
  return { status, latencyMs: performance.now() - t0, submitMs };
}

async function runLoad(options: {
  baseUrl: string;
  jobs: number;
  seconds: number;
  concurrency: number;
  n: number;
  m: number;
  warmup: number;
  drainSeconds: number;
}): Promise<LoadReport> {
  const { baseUrl, n, m } = options;
  const drain = new AbortController();
  // One listener a job in flight (runJob), removed when it ends.
  setMaxListeners(Math.max(options.concurrency, options.warmup) + 1, drain.signal);

  // Warm-up, not counted.
  let seed = 1;
  await Promise.all(Array.from({ length: options.warmup }, () => runJob(baseUrl, n, m, seed++, drain.signal)));

  const outcomes: Outcome[] = [];
  let submitted = 0;
  let unfinished = 0;
  let lastFinish = 0;
  const start = performance.now();
  const deadline = start + options.seconds * 1e3;
  let stoppedBy: LoadReport['stoppedBy'] = 'job-limit';
  const client = async (): Promise<void> => {
    for (;;) {
      if (submitted >= options.jobs) return;
      if (performance.now() >= deadline) {
        stoppedBy = 'time-limit';
        return;
      }
      submitted++;
      try {
        outcomes.push(await runJob(baseUrl, n, m, seed++, drain.signal));
        lastFinish = performance.now();
      } catch {
        unfinished++;
      }
    }
  };
  const clients = Promise.all(Array.from({ length: options.concurrency }, client));
  // Past the deadline, jobs in flight get drainSeconds to finish; then their streams are cut.
  const drainTimer = setTimeout(() => drain.abort(), options.seconds * 1e3 + options.drainSeconds * 1e3);
  await clients;
  clearTimeout(drainTimer);
  const cpu = process.cpuUsage();

  const ok = outcomes.filter((o) => o.status === 'succeeded');
  const latencies = ok.map((o) => o.latencyMs).sort((a, b) => a - b);
  const submits = outcomes.map((o) => o.submitMs).sort((a, b) => a - b);
  const rejected: Record<string, number> = {};
  for (const o of outcomes) if (o.status.startsWith('http-')) rejected[o.status] = (rejected[o.status] ?? 0) + 1;
  const windowSeconds = ((lastFinish || performance.now()) - start) / 1e3;
  return {
    baseUrl,
    n,
    m,
    concurrency: options.concurrency,
    jobLimit: options.jobs,
    secondsLimit: options.seconds,
    warmupJobs: options.warmup,
    submitted,
    succeeded: ok.length,
    failed: outcomes.filter((o) => o.status === 'failed').length,
    rejected,
    unfinished,
    windowSeconds,
    throughput: ok.length / windowSeconds,
    latencyMs:
      latencies.length === 0
        ? null
        : {
            p50: quantile(latencies, 0.5),
            p90: quantile(latencies, 0.9),
            p99: quantile(latencies, 0.99),
            max: latencies[latencies.length - 1],
            mean: latencies.reduce((s, x) => s + x, 0) / latencies.length,
          },
    submitMs: submits.length === 0 ? null : { p50: quantile(submits, 0.5), p99: quantile(submits, 0.99) },
    stoppedBy,
    loadCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      jobs: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '30' },
      concurrency: { type: 'string', default: '32' },
      n: { type: 'string', default: '50' },
      m: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '20' },
      drain: { type: 'string', default: '30' },
    },
  });
  if (!values['base-url']) throw new Error('--base-url is required');
  const report = await runLoad({
    baseUrl: values['base-url'].replace(/\/$/, ''),
    jobs: Number(values.jobs),
    seconds: Number(values.seconds),
    concurrency: Number(values.concurrency),
    n: Number(values.n),
    m: Number(values.m),
    warmup: Number(values.warmup),
    drainSeconds: Number(values.drain),
  });
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
