/**
 * At start-up (`npm start`, `npm run start:api`): say which AUTH_MODE is active and why, and in
 * `keys` mode refuse to start while no admin key exists (nobody could create keys through the API,
 * and an operator who exposed the service meant it to be protected), printing how to create one.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { StoreUnavailableError } from '../errors.js';
import type { ApiKeyService } from './apiKey.js';

/** The commands that create the first admin key, for the start-up message and the README. */
export function howToCreateAdminKey(config: Pick<Config, 'REDIS_URL'>, embedded: boolean): string {
  const target = embedded
    ? '(with the same DATA_DIR as the service: the command opens its embedded Redis)'
    : `(with REDIS_URL=${config.REDIS_URL ?? '<the service Redis>'})`;
  return [
    'Create an admin API key, then start again:',
    `  npm run keys -- create --name admin --admin    ${target}`,
    'It prints the key once; send it as `Authorization: Bearer <key>`. Or run without keys, only on a trusted network: AUTH_MODE=none.',
  ].join('\n');
}

/** Logs the mode; false when the service must not start (keys mode without an admin key). */
export async function checkAuthMode(
  config: Pick<Config, 'AUTH_MODE' | 'AUTH_MODE_REASON' | 'REDIS_URL'>,
  keys: ApiKeyService,
  log: Logger,
  options: { embeddedRedis: boolean },
): Promise<boolean> {
  const effect =
    config.AUTH_MODE === 'keys'
      ? 'every /v1 request needs `Authorization: Bearer <key>`; /metrics and /admin need an admin key'
      : 'no API keys are checked: anyone who can connect has full access';
  log.info({ authMode: config.AUTH_MODE }, `AUTH_MODE=${config.AUTH_MODE} (${config.AUTH_MODE_REASON}): ${effect}`);
  if (config.AUTH_MODE === 'none') return true;
  let hasAdmin: boolean;
  try {
    hasAdmin = await keys.hasAdmin();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    log.warn('Redis is unreachable: cannot check that an admin API key exists (requests get 503 until Redis answers)');
    return true;
  }
  if (hasAdmin) return true;
  const advice = howToCreateAdminKey(config, options.embeddedRedis);
  log.fatal({ authMode: config.AUTH_MODE }, `AUTH_MODE=keys and no admin API key exists: refusing to start. ${advice.replace(/\n/g, ' ')}`);
  process.stderr.write(`\nAUTH_MODE=keys (${config.AUTH_MODE_REASON}) and no admin API key exists: refusing to start.\n${advice}\n\n`);
  return false;
}
