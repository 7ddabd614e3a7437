/**
 * ioredis connections of the job layer. The API's command connection fails fast (no offline
 * queue, one retry, bounded command time) so that requests answer 503 at once when Redis is
 * down; workers and processors ride out short outages instead.
 */
import type { RedisOptions as BullRedisOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { JobError, StoreUnavailableError } from '../errors.js';

/** Host, port, credentials, db and TLS from a redis:// or rediss:// URL. */
function redisOptionsFromUrl(url: string): RedisOptions {
  const parsed = new URL(url);
  const options: RedisOptions = {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
  };
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  const db = parsed.pathname.replace(/^\//, '');
  if (db) options.db = Number(db);
  if (parsed.protocol === 'rediss:') options.tls = {};
  return options;
}

/** Connection options for BullMQ's own connections (Worker, QueueEvents), which it creates and tunes itself. */
export function bullmqConnectionOptions(url: string, name: string): BullRedisOptions {
  const { host, port, username, password, db, tls } = redisOptionsFromUrl(url);
  return { host, port, username, password, db, tls, connectionName: name };
}

/** Reconnect quickly but never give up: the process stays up and recovers when Redis returns. */
const reconnect = (times: number): number => Math.min(100 * times, 2000);

export function createFailFastConnection(url: string, name: string): Redis {
  return new Redis({
    ...redisOptionsFromUrl(url),
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 15_000,
    retryStrategy: reconnect,
  });
}

export function createResilientConnection(url: string, name: string): Redis {
  return new Redis({ ...redisOptionsFromUrl(url), connectionName: name, maxRetriesPerRequest: 20, retryStrategy: reconnect });
}

/** Subscriber connections never time out commands and keep their subscriptions across reconnects. */
export function createSubscriberConnection(url: string, name: string): Redis {
  return new Redis({ ...redisOptionsFromUrl(url), connectionName: name, maxRetriesPerRequest: null, retryStrategy: reconnect });
}

/** Resolves when `redis` is ready, or after `timeoutMs` (false) without throwing. */
export function waitUntilConnected(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    function done(ok: boolean): void {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    }
    redis.on('ready', onReady);
  });
}

/**
 * Subscribe once the connection is ready, and again after every reconnect. Subscribing earlier
 * races ioredis' ready check (Redis refuses INFO in subscriber mode, ioredis then drops the
 * connection and does not restore that subscription). Resolves false if not ready in time (the
 * subscription then happens when the connection becomes ready).
 */
export async function subscribeWhenReady(redis: Redis, channel: string, timeoutMs: number): Promise<boolean> {
  const subscribe = (): Promise<unknown> => redis.subscribe(channel);
  redis.on('ready', () => {
    subscribe().catch(() => undefined);
  });
  if (redis.status !== 'ready' && !(await waitUntilConnected(redis, timeoutMs))) return false;
  await subscribe();
  return true;
}

/** Errors that mean "Redis is unreachable", as opposed to bugs. */
function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code))
    return true;
  return /Stream isn't writeable|Connection is closed|Command timed out|connect ETIMEDOUT|ECONNREFUSED|Reached the max retries/i.test(
    error.message,
  );
}

/** Runs `work`; typed job errors pass, Redis connection failures become StoreUnavailableError (503). */
export async function storeCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof JobError) throw error;
    if (isConnectionError(error)) throw new StoreUnavailableError((error as Error).message);
    throw error;
  }
}

/** Rejects with a "Command timed out" error (a connection error) when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Command timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One warning when a connection starts failing, then at most one every 30 s; one line when it is back. */
export function logConnectionErrors(redis: Redis, log: Logger, name: string): void {
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastLogged < 30_000) return;
    lastLogged = now;
    log.warn({ connection: name, err: err.message }, 'redis connection error');
  });
  redis.on('ready', () => {
    if (lastLogged !== 0) log.info({ connection: name }, 'redis connection restored');
    lastLogged = 0;
  });
}

/** How long closing one connection or one BullMQ object may wait on Redis before it is dropped. */
export const CLOSE_TIMEOUT_MS = 500;

/** Whether `promise` settles (resolves or rejects: the rejection is swallowed) within `ms`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Closes an ioredis connection within `timeoutMs` whatever Redis does: QUIT while it is connected
 * (the replies it waits for arrive first), then a disconnect, which also ends its reconnection
 * attempts. A QUIT to a Redis that is gone would wait behind the queued commands for as long as
 * they are retried (forever on a subscriber or BullMQ connection).
 */
export async function closeConnection(redis: Redis, timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
  if (redis.status === 'ready') await settlesWithin(redis.quit(), timeoutMs);
  if (redis.status !== 'end') redis.disconnect();
}

/** What closeBullmq needs of a BullMQ Worker, Queue, QueueEvents or FlowProducer. */
export interface ClosableBullmq {
  close(): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * Closes a BullMQ object within `timeoutMs` (for a Worker: the grace of its running jobs); past it,
 * drops its connections so that they stop reconnecting, without waiting (ioredis never reports the
 * end of a connection dropped while it was reconnecting). True when it closed in time.
 */
export async function closeBullmq(target: ClosableBullmq, timeoutMs = CLOSE_TIMEOUT_MS): Promise<boolean> {
  if (await settlesWithin(target.close(), timeoutMs)) return true;
  target.disconnect().catch(() => undefined);
  return false;
}
