/**
 * Lua scripts for the status transitions of a job document. Each runs atomically in Redis, so a
 * cancel racing with a worker picking the job up, or a late worker write racing with a delete,
 * always resolves one way; each publishes the job's summary on the status channel after writing it
 * (see STATUS_FIELDS), so a subscriber that then reads the document sees at least that state.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import { FINISHED_STATUSES, type JobStatus } from '../types.js';

/** A job status as a Lua string literal: the scripts name statuses only through this (so only real ones). */
const luaStatus = (status: JobStatus): string => `'${status}'`;

/** finished(s): s is one of FINISHED_STATUSES. */
const FINISHED = `local function finished(s) return ${FINISHED_STATUSES.map((status) => `s == ${luaStatus(status)}`).join(' or ')} end\n`;

/**
 * The document fields a status message carries, in this order (a JSON array; false when unset):
 * every field a job is shown from (jobFromDocument), so the API's event streams send the status
 * from the message without reading the document again.
 */
export const STATUS_FIELDS = [
  'id',
  'type',
  'status',
  'createdAt',
  'startedAt',
  'finishedAt',
  'n',
  'm',
  'attempts',
  'algorithms',
  'options',
  'storage',
  'backend',
  'input',
  'digest',
  'partition',
  'labels',
  'error',
  'progress',
  'result',
  'notifyUrl',
  'deliveries',
  'summary',
] as const;

/**
 * A stored result longer than this (bytes) is left out of status messages, `true` in its place: Lua's cjson took
 * 150-200 ms to encode a finished advise job's 14.5 MB result at n = 10^6, Redis serving no one meanwhile, and every
 * API process then parsed it; a message over the subscribers' output buffer limit (32 MB by default) would drop their
 * connection. Subscribers of such a job read it instead (../service/jobEventHub.ts).
 */
export const STATUS_RESULT_MAX_BYTES = 64 * 1024;

/** Lua's (1-based) index of the result in a status message. */
const RESULT_INDEX = STATUS_FIELDS.indexOf('result') + 1;

// HSTRLEN first: a long result is not even copied into Lua (HMGET reads the short `id` in its place, then `true` marks it).
const PUBLISH_STATUS = `local function publishStatus(channel)
  local long = redis.call('HSTRLEN', KEYS[1], 'result') > ${STATUS_RESULT_MAX_BYTES}
  local values = redis.call('HMGET', KEYS[1], ${STATUS_FIELDS.map((f) => (f === 'result' ? `long and 'id' or 'result'` : `'${f}'`)).join(', ')})
  if long then values[${RESULT_INDEX}] = true end
  redis.call('PUBLISH', channel, cjson.encode(values))
end\n`;

/**
 * A job that asked for a callback (a `notifyUrl` in its document) is put in the delivery outbox as it
 * ends, in the same script: its callback cannot be lost between the two (../notify/notifyWorker.ts
 * drains the outbox into the delivery queue). The outbox is named in ARGV: this service runs on one Redis.
 */
const NOTIFY_END = `local function notifyEnd(outbox, member)
  if redis.call('HEXISTS', KEYS[1], 'notifyUrl') == 1 then redis.call('RPUSH', outbox, member) end
end\n`;

/** KEYS: doc, ...keys to re-expire. ARGV: ttl. */
const EXPIRE_ALL = `local function expireAll(ttl) for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ttl) end end\n`;

export const scripts = {
  /**
   * A worker starts an attempt. KEYS: doc. ARGV: channel, now, backend (optional: the attempt's
   * numerical backend, in the same step, so the 'running' message carries it). Returns 'missing', a finished status, 'cancel-requested' (nothing changed), or 'running'.
   */
  lssBegin: {
    numberOfKeys: 1,
    lua: `${FINISHED}${PUBLISH_STATUS}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local status = redis.call('HGET', KEYS[1], 'status')
if finished(status) then return status end
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 'cancel-requested' end
redis.call('HSET', KEYS[1], 'status', ${luaStatus('running')}, 'startedAt', ARGV[2])
if ARGV[3] and ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'backend', ARGV[3]) end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HDEL', KEYS[1], 'progress')
publishStatus(ARGV[1])
return ${luaStatus('running')}`,
  },
  /**
   * KEYS: doc. ARGV: progress JSON, channel, job id. Only while running: stored, and published on the
   * status channel as `{"id": ..., "progress": ...}` (an object, where status messages are arrays);
   * 1 when saved, 2 when saved and a cancel was requested (the running job's own check, should the
   * cancel message not reach it), 0 otherwise.
   */
  lssProgress: {
    numberOfKeys: 1,
    lua: `if redis.call('HGET', KEYS[1], 'status') == ${luaStatus('running')} then
  redis.call('HSET', KEYS[1], 'progress', ARGV[1])
  redis.call('PUBLISH', ARGV[2], '{"id":' .. cjson.encode(ARGV[3]) .. ',"progress":' .. ARGV[1] .. '}')
  if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 2 end
  return 1
end
return 0`,
  },
  /**
   * What the running attempt computes on. KEYS: doc. ARGV: storage, backend, digest JSON or ''.
   * Nothing when the document is gone.
   */
  lssRecordRun: {
    numberOfKeys: 1,
    lua: `if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'storage', ARGV[1], 'backend', ARGV[2])
  if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'digest', ARGV[3]) end
end`,
  },
  /**
   * A job ends. KEYS: doc, its inputs (re-expired: they live ttl from the end, as the outputs the
   * same MULTI writes do). ARGV: channel, status, finishedAt, ttl,
   * result JSON or '', error JSON or '', progress JSON or '', notify outbox, outbox member, the runs' summary JSON or ''
   * (what the job list shows). No-op (0) when the document is gone or already finished.
   */
  lssFinish: {
    numberOfKeys: null,
    lua: `${FINISHED}${EXPIRE_ALL}${PUBLISH_STATUS}${NOTIFY_END}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if finished(redis.call('HGET', KEYS[1], 'status')) then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'finishedAt', ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'result', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'error', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'progress', ARGV[7]) end
if ARGV[10] and ARGV[10] ~= '' then redis.call('HSET', KEYS[1], 'summary', ARGV[10]) end
expireAll(tonumber(ARGV[4]))
publishStatus(ARGV[1])
notifyEnd(ARGV[8], ARGV[9])
return 1`,
  },
  /**
   * Cancel. KEYS: doc, ...its other keys. ARGV: channel, now, ttl, notify outbox, outbox member.
   * Returns 'missing', a finished status (unchanged), 'cancelled-now' (was queued), or 'running'
   * (cancelRequested set; the worker stops it).
   */
  lssCancel: {
    numberOfKeys: null,
    lua: `${FINISHED}${EXPIRE_ALL}${PUBLISH_STATUS}${NOTIFY_END}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local status = redis.call('HGET', KEYS[1], 'status')
if finished(status) then return status end
redis.call('HSET', KEYS[1], 'cancelRequested', '1')
if status == ${luaStatus('queued')} then
  redis.call('HSET', KEYS[1], 'status', ${luaStatus('cancelled')}, 'finishedAt', ARGV[2])
  expireAll(tonumber(ARGV[3]))
  publishStatus(ARGV[1])
  notifyEnd(ARGV[4], ARGV[5])
  return 'cancelled-now'
end
return status`,
  },
  /**
   * A running job's checkpoint replaces the previous one. KEYS: doc, checkpoint. ARGV: bytes.
   * Only while the job runs (a late write of an attempt that lost its job writes nothing: 0); the
   * checkpoint expires when the document does.
   */
  lssCheckpoint: {
    numberOfKeys: 2,
    // The document's expiry as an absolute time (PEXPIRETIME, Redis 7): both keys expire at the same millisecond. A
    // relative PX from PTTL could land after it (PTTL reads the script's frozen clock, SET PX the running one: seen
    // 1 ms late on a loaded machine); PTTL remains the way on a Redis without PEXPIRETIME.
    lua: `if redis.call('HGET', KEYS[1], 'status') ~= ${luaStatus('running')} then return 0 end
local at = redis.pcall('PEXPIRETIME', KEYS[1])
if type(at) == 'number' then
  if at > 0 then redis.call('SET', KEYS[2], ARGV[1], 'PXAT', at) else redis.call('SET', KEYS[2], ARGV[1]) end
  return 1
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 0 then redis.call('SET', KEYS[2], ARGV[1], 'PX', pttl) else redis.call('SET', KEYS[2], ARGV[1]) end
return 1`,
  },
  /** An attempt failed and BullMQ will retry: back to 'queued'. KEYS: doc. ARGV: channel. */
  lssRetry: {
    numberOfKeys: 1,
    lua: `${PUBLISH_STATUS}
if redis.call('HGET', KEYS[1], 'status') == ${luaStatus('running')} then
  redis.call('HSET', KEYS[1], 'status', ${luaStatus('queued')})
  redis.call('HDEL', KEYS[1], 'progress')
  publishStatus(ARGV[1])
  return 1
end
return 0`,
  },
  /**
   * Delete a finished job. KEYS: doc, index, ...its other keys. ARGV: id.
   * Returns 'deleted', 'missing' or the unfinished status.
   */
  lssDelete: {
    numberOfKeys: null,
    lua: `${FINISHED}
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('ZREM', KEYS[2], ARGV[1]) return 'missing' end
local status = redis.call('HGET', KEYS[1], 'status')
if not finished(status) then return status end
for i = 1, #KEYS do if i ~= 2 then redis.call('DEL', KEYS[i]) end end
redis.call('ZREM', KEYS[2], ARGV[1])
return 'deleted'`,
  },
} as const;

export type ScriptName = keyof typeof scripts;

export function defineScripts(redis: Redis): void {
  for (const [name, { numberOfKeys, lua }] of Object.entries(scripts)) {
    // Without numberOfKeys, ioredis takes the key count as the first argument.
    if (!(name in redis)) redis.defineCommand(name, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
  }
}

type ScriptCaller = (...args: (string | number | Buffer)[]) => Promise<unknown>;

/** Run a script defined by defineScripts (for scripts with a variable key count, `keys.length` goes first). */
export function runScript(target: Redis, name: ScriptName, keys: string[], args: (string | number | Buffer)[]): Promise<unknown> {
  const fn = (target as unknown as Record<ScriptName, ScriptCaller>)[name];
  const head = scripts[name].numberOfKeys === null ? [keys.length] : [];
  return fn.call(target, ...head, ...keys, ...args);
}

/** Queue a script on a pipeline or MULTI. */
export function queueScript(target: ChainableCommander, name: ScriptName, keys: string[], args: (string | number)[]): void {
  const fn = (target as unknown as Record<ScriptName, (...a: (string | number)[]) => unknown>)[name];
  const head = scripts[name].numberOfKeys === null ? [keys.length] : [];
  fn.call(target, ...head, ...keys, ...args);
}
