/**
 * AUTH_MODE's default and the start-up check: 'none' only on a loopback HOST (the reason said),
 * 'keys' otherwise; in keys mode the service refuses to start until a live admin key exists
 * (a real Redis), and says how to create one.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isLoopbackHost, loadConfig } from '../../../src/config.js';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { ApiKeyStore } from '../../../src/jobs/apiKeys/apiKeyStore.js';
import { checkAuthMode } from '../../../src/jobs/apiKeys/authStartup.js';
import { startTestRedis } from '../../support/service.js';

let redis: EmbeddedRedis;
let connection: Redis;

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
});

afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});

describe('AUTH_MODE', () => {
  it("defaults to 'none' only on a loopback HOST, and says why", () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(loadConfig({ HOST: host }).AUTH_MODE, host).toBe('none');
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'example.org', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
      const config = loadConfig({ HOST: host });
      expect(config.AUTH_MODE, host).toBe('keys');
      expect(config.AUTH_MODE_REASON).toContain(`HOST ${host} is not a loopback address`);
    }
    expect(loadConfig({ HOST: '0.0.0.0', AUTH_MODE: 'none' })).toMatchObject({
      AUTH_MODE: 'none',
      AUTH_MODE_REASON: 'AUTH_MODE=none is set',
    });
    expect(loadConfig({ AUTH_MODE: 'keys' }).AUTH_MODE).toBe('keys');
    expect(() => loadConfig({ AUTH_MODE: 'open' })).toThrow(/AUTH_MODE/);
  });

  it('refuses to start in keys mode until a live admin key exists, printing how to create one', async () => {
    const keys = new ApiKeyStore(connection, 'startup-test');
    const log = pino({ level: 'silent' });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const config = loadConfig({ HOST: '0.0.0.0', REDIS_URL: redis.url });
      expect(await checkAuthMode(config, keys, log, { embeddedRedis: false })).toBe(false);
      const printed = stderr.mock.calls.map(([text]) => String(text)).join('');
      expect(printed).toContain('npm run keys -- create --name admin --admin');
      expect(printed).toContain(`REDIS_URL=${redis.url}`);
      await keys.create({ name: 'tenant only' });
      expect(await checkAuthMode(config, keys, log, { embeddedRedis: false })).toBe(false);
      const admin = await keys.create({ name: 'operator', admin: true });
      expect(await checkAuthMode(config, keys, log, { embeddedRedis: false })).toBe(true);
      await keys.revoke(admin.id);
      expect(await checkAuthMode(config, keys, log, { embeddedRedis: false })).toBe(false);
      expect(await checkAuthMode(loadConfig({ HOST: '127.0.0.1' }), keys, log, { embeddedRedis: true })).toBe(true);
    } finally {
      stderr.mockRestore();
    }
  });

  it('stores only the digest of a key: its secret appears nowhere in Redis', async () => {
    const keys = new ApiKeyStore(connection, 'digest-test');
    const created = await keys.create({ name: 'secretive', quotas: { activeJobs: 4 } });
    const names = await connection.keys('digest-test:*');
    for (const name of names) {
      const type = await connection.type(name);
      const values =
        type === 'hash'
          ? Object.values(await connection.hgetall(name))
          : type === 'string'
            ? [await connection.get(name)]
            : await connection.zrange(name, 0, -1);
      expect(names.join(' ') + values.join(' ')).not.toContain(created.key);
    }
    expect((await keys.authenticate(created.key))?.quotas).toEqual({ activeJobs: 4 });
    expect(await keys.authenticate(`${created.key.slice(0, -1)}${created.key.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
  });
});
