/**
 * The benchmark's paths and child processes. Every timed part (each side of a problem, the fixture
 * checks, the service and its load generator) runs in a process of its own, started from the
 * repository root, and reports one JSON object on the last line of its stdout.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withHugePages } from '../src/jobs/sandboxChild.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH = join(ROOT, 'bench');
/** Problem files, raw results and the service's log; not committed. */
export const CACHE = join(BENCH, '.cache');
// Made here, once, for every bench script: a fresh clone has none, and the scripts run alone too.
mkdirSync(CACHE, { recursive: true });

/** Node with TypeScript through tsx (no build step). */
export const NODE_TSX = ['--import', 'tsx'];
/** The stage processes collect garbage before the memory baselines they take. */
export const NODE_STAGES = [...NODE_TSX, '--expose-gc'];
export const CHILD_TIMEOUT_MS = 20 * 60_000;
/** The sparse problems at n = 10^6, the job path and the HTTP solve may take longer. */
export const SPARSE_CHILD_TIMEOUT_MS = 120 * 60_000;

/** A progress line of the orchestrator on stdout. */
export function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/**
 * The environment of every process the benchmark starts, ours and the references alike: the service's job processes'
 * (src/jobs/sandboxChild.ts, JOB_HUGE_PAGES on by default), whose malloc advises huge pages for its large arrays, as
 * NumPy does for its own arrays in any process.
 */
export const CHILD_ENV: NodeJS.ProcessEnv = { ...process.env, GLIBC_TUNABLES: withHugePages(process.env.GLIBC_TUNABLES) };

export function runChild(
  command: string,
  argv: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ChildResult> {
  return new Promise((resolvePromise) => {
    const t0 = performance.now();
    const child = spawn(command, argv, { cwd: ROOT, env: options.env ?? CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    // A command that cannot start (e.g. no python3) ends like a failed one.
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, stdout, stderr: `${stderr}${error.message}`, seconds: (performance.now() - t0) / 1e3 });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, seconds: (performance.now() - t0) / 1e3 });
    });
  });
}

/** The JSON object on the last non-empty stdout line of a child, or an error naming what went wrong. */
export function lastJson<T>(result: ChildResult, what: string): T | { error: string } {
  const line = result.stdout.trim().split('\n').pop() ?? '';
  if (result.code === 0 && line.startsWith('{')) return JSON.parse(line) as T;
  const tail = result.stderr.trim().split('\n').slice(-5).join(' | ');
  return { error: `${what} exited with ${result.code}: ${tail || '(no stderr)'}` };
}
