/**
 * A private redis-server for `npm start` without REDIS_URL, and for the tests: loopback only, a
 * free port. With `dataDir` (npm start: DATA_DIR) it keeps its data there in an append-only file
 * (`appendonly yes`, `appendfsync everysec`: every acknowledged write is in the file before the
 * reply, fsynced within a second), read back by the next start; without it, a temporary directory
 * and no persistence (the tests). Stopped by stop() (SIGTERM: the append-only file is fsynced),
 * and killed when this process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface EmbeddedRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface EmbeddedRedisOptions {
  /** redis-server binary (REDIS_SERVER_BIN). */
  bin?: string;
  /** Milliseconds to wait for the first PONG. */
  startTimeoutMs?: number;
  /** Listen on this port instead of a free one (e.g. to restart a stopped server). */
  port?: number;
  /**
   * Keep the data in this directory (created when missing) as an append-only file, and read it back
   * at start; the directory is never removed. Unset: a temporary directory, no persistence.
   */
  dataDir?: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One PING over a raw socket: true on +PONG. */
export function pingRedis(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export async function startEmbeddedRedis(options: EmbeddedRedisOptions = {}): Promise<EmbeddedRedis> {
  const bin = options.bin ?? 'redis-server';
  // Reading back a large append-only file takes a while (redis answers LOADING meanwhile).
  const startTimeoutMs = options.startTimeoutMs ?? (options.dataDir === undefined ? 10_000 : 120_000);
  const persistent = options.dataDir !== undefined;
  // A port found free can be taken before redis binds it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < (options.port === undefined ? 5 : 1); attempt++) {
    const port = options.port ?? (await freePort());
    const dir = persistent ? resolve(options.dataDir!) : await mkdtemp(join(tmpdir(), 'lss-redis-'));
    if (persistent) await mkdir(dir, { recursive: true });
    try {
      return await launch(bin, port, dir, startTimeoutMs, persistent);
    } catch (error) {
      lastError = error;
      if (!persistent) await rm(dir, { recursive: true, force: true });
    }
  }
  throw lastError;
}

async function launch(bin: string, port: number, dir: string, startTimeoutMs: number, persistent: boolean): Promise<EmbeddedRedis> {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    // No RDB snapshots; with a data directory, the append-only file (rewritten in the background as it grows).
    '--save',
    '',
    '--appendonly',
    persistent ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--loglevel',
    'warning',
    // BullMQ's recommendation: never evict its keys.
    '--maxmemory-policy',
    'noeviction',
  ];
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  const killOnExit = (): void => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const deadline = Date.now() + startTimeoutMs;
  while (!(await pingRedis(port))) {
    if (exited || Date.now() > deadline) {
      killOnExit();
      process.off('exit', killOnExit);
      throw new Error(`redis-server (${bin}) did not start on port ${port}${stderr ? `: ${stderr.trim()}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }

  let stopping: Promise<void> | null = null;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    stop() {
      stopping ??= (async () => {
        if (!exited) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exit;
          clearTimeout(timer);
        }
        process.off('exit', killOnExit);
        if (!persistent) await rm(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
