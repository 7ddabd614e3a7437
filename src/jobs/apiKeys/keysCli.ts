/**
 * `npm run keys -- <command>` (scripts/keys.ts; in the container image, `node dist/src/jobs/apiKeys/keysCli.js
 * <command>`): manage API keys (AUTH_MODE=keys) from the machine that runs the service.
 *
 *   create --name NAME [--admin] [--requests-per-second N] [--active-jobs N] [--stored-bytes N] [--study-samples N]
 *   list
 *   revoke ID
 *
 * The keys live in the service's Redis: REDIS_URL when set; else the embedded one of `npm start`,
 * in DATA_DIR: the running service's redis-server (its port is in DATA_DIR's lock file), or, when
 * the service is stopped, a private redis-server started on DATA_DIR for this command (under the
 * same lock, so the service cannot start on it meanwhile) and stopped after it (its append-only
 * file keeps the change). The secret of a new key is printed once; only its SHA-256 is stored.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { loadConfig } from '../../config.js';
import { DataDirInUseError, LOCK_FILE_NAME, lockDataDir, type DataDirLock } from '../dataDirLock.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../embeddedRedis.js';
import type { ApiKey, KeyQuotas } from './apiKey.js';
import { ApiKeyStore } from './apiKeyStore.js';

const USAGE = `usage: npm run keys -- create --name NAME [--admin] [--requests-per-second N] [--active-jobs N] [--stored-bytes N] [--study-samples N]
       npm run keys -- list
       npm run keys -- revoke ID
Redis: REDIS_URL, else the embedded Redis of npm start in DATA_DIR (default ./data).`;

class UsageError extends Error {}

interface Target {
  url: string;
  close(): Promise<void>;
}

/** The service's Redis, as the file comment says. */
async function openTarget(config: ReturnType<typeof loadConfig>): Promise<Target> {
  if (config.REDIS_URL) return { url: config.REDIS_URL, close: () => Promise.resolve() };
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(config.DATA_DIR);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    const owner = JSON.parse(await readFile(join(error.dataDir, LOCK_FILE_NAME), 'utf8')) as { redisPort?: number };
    if (owner.redisPort === undefined) {
      throw new Error(`the service using DATA_DIR ${error.dataDir} has not started its Redis yet; retry`, { cause: error });
    }
    return { url: `redis://127.0.0.1:${owner.redisPort}`, close: () => Promise.resolve() };
  }
  let embedded: EmbeddedRedis;
  try {
    embedded = await startEmbeddedRedis({ bin: config.REDIS_SERVER_BIN, dataDir: lock.dataDir });
    await lock.recordRedis(embedded.pid, embedded.port);
  } catch (error) {
    await lock.release();
    throw error;
  }
  return {
    url: embedded.url,
    async close() {
      await embedded.stop();
      await lock.release();
    },
  };
}

function positiveInteger(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} must be a positive integer (got ${text})`);
  return value;
}

function describeKey(key: ApiKey): string {
  const quotas = Object.entries(key.quotas)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(',');
  return [
    key.id,
    key.admin ? 'admin' : 'tenant',
    key.revokedAt ? `revoked ${key.revokedAt}` : 'live',
    key.name,
    `created ${key.createdAt}`,
    `last used ${key.lastUsedAt ?? 'never'}`,
    quotas || 'default quotas',
  ].join('\t');
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      admin: { type: 'boolean', default: false },
      'requests-per-second': { type: 'string' },
      'active-jobs': { type: 'string' },
      'stored-bytes': { type: 'string' },
      'study-samples': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) throw new UsageError('');
  if (!['create', 'list', 'revoke'].includes(command)) throw new UsageError(`unknown command '${command}'`);
  if (command === 'create' && !values.name) throw new UsageError('create needs --name');
  if (command === 'revoke' && rest.length !== 1) throw new UsageError('revoke needs the id of the key (see list)');
  const quotas: KeyQuotas = {
    requestsPerSecond: positiveInteger('requests-per-second', values['requests-per-second']),
    activeJobs: positiveInteger('active-jobs', values['active-jobs']),
    storedBytes: positiveInteger('stored-bytes', values['stored-bytes']),
    studySamples: positiveInteger('study-samples', values['study-samples']),
  };

  const config = loadConfig();
  const target = await openTarget(config);
  const redis = new Redis(target.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = new ApiKeyStore(redis, config.KEY_PREFIX);
    if (command === 'create') {
      const created = await keys.create({ name: values.name!, admin: values.admin, quotas });
      process.stdout.write(
        `Created ${created.admin ? 'admin ' : ''}key ${created.id} (${created.name}). Its secret, shown this once:\n\n${created.key}\n\n` +
          'Send it as `Authorization: Bearer <key>`.\n',
      );
    } else if (command === 'list') {
      const all = await keys.list();
      process.stdout.write(all.length === 0 ? 'No API keys.\n' : `${all.map(describeKey).join('\n')}\n`);
    } else {
      const revoked = await keys.revoke(rest[0]);
      process.stdout.write(`Revoked key ${revoked.id} (${revoked.name}) at ${revoked.revokedAt ?? ''}.\n`);
    }
  } finally {
    await redis.quit().catch(() => redis.disconnect());
    await target.close();
  }
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message ? `${error.message}\n` : ''}${USAGE}\n`);
  } else {
    process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exitCode = 1;
}
