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
  /** Settles when the redis-server process has exited, by stop() or otherwise (killed, crashed). */
  readonly exited: Promise<RedisExit>;
  stop(): Promise<void>;
}

/** How a redis-server process ended. */
export interface RedisExit {
  code: number | null;
  signal: NodeJS.Signals | null;
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
  const exit = new Promise<RedisExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    });
    child.once('error', () => {
      exited = true;
      resolve({ code: null, signal: null });
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
    exited: exit,
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

/** A private redis-server kept running (keepRedisRunning): the one running now, and the stop that ends the keeping. */
export interface KeptRedis {
  current(): EmbeddedRedis;
  stop(): Promise<void>;
}

/** What keepRedisRunning reports. */
export interface KeptRedisEvents {
  /** The server exited without stop(): restarting it. */
  exited(exit: RedisExit, pid: number): void;
  restarted(redis: EmbeddedRedis): void | Promise<void>;
  /** More than `restarts` exits within `windowMs`, or a restart that keeps failing: the caller's to end the service. */
  gaveUp(error: Error): void;
}

/**
 * A private redis-server restarted (`restart`: on its port and data directory, so every client reconnects to the same
 * URL and reads the same append-only file) whenever it exits other than by stop(). Without this, a killed or crashed
 * server left `npm start` answering 503 to every request forever, its liveness probe still ok. At most `restarts`
 * restarts within `windowMs`; past them (or when a restart keeps failing) `gaveUp`.
 */
export function keepRedisRunning(
  started: EmbeddedRedis,
  restart: () => Promise<EmbeddedRedis>,
  events: KeptRedisEvents,
  { restarts = 5, windowMs = 60_000 }: { restarts?: number; windowMs?: number } = {},
): KeptRedis {
  let current = started;
  let stopping = false;
  const recent: number[] = [];
  const watch = (redis: EmbeddedRedis): void => {
    void redis.exited.then(async (exit) => {
      if (stopping) return;
      events.exited(exit, redis.pid);
      let lastError: unknown = null;
      for (;;) {
        const now = Date.now();
        while (recent.length > 0 && now - recent[0] > windowMs) recent.shift();
        if (recent.length >= restarts) {
          const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
          events.gaveUp(new Error(`redis-server exited or failed to restart ${restarts} times within ${windowMs} ms${cause}`));
          return;
        }
        recent.push(now);
        try {
          const next = await restart();
          if (stopping) {
            await next.stop();
            return;
          }
          current = next;
          await events.restarted(next);
          watch(next);
          return;
        } catch (error) {
          lastError = error;
          await new Promise((resolve) => setTimeout(resolve, 250 * recent.length));
        }
      }
    });
  };
  watch(started);
  return {
    current: () => current,
    async stop() {
      stopping = true;
      await current.stop();
    },
  };
}
