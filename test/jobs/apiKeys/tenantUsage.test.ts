/**
 * A key's active-job slots counted in Redis (src/jobs/apiKeys/tenantUsage.ts) against a real redis-server: a job is
 * admitted before its document is written, so an admitted id without a document holds its slot for the grace, and
 * gives it back after it (its creation died with its process) or once its document says it finished.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../../src/jobs/errors.js';
import { ADMITTED_GRACE_MS, TenantUsage } from '../../../src/jobs/apiKeys/tenantUsage.js';
import type { Tenant } from '../../../src/jobs/apiKeys/apiKey.js';
import { JobKeys } from '../../../src/jobs/store/keys.js';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { startTestRedis } from '../../support/service.js';

let server: EmbeddedRedis;
let redis: Redis;
const keys = new JobKeys('usage-test', 'usage-queue');
const tenant = (owner: string): Tenant => ({
  owner,
  quotas: { requestsPerSecond: 100, activeJobs: 2, storedBytes: 1e9, studySamples: 1e6 },
});

beforeAll(async () => {
  server = await startTestRedis();
  redis = new Redis(server.url);
});

afterAll(async () => {
  await redis?.quit();
  await server?.stop();
});

describe('active jobs', () => {
  it('an admitted job without a document yet keeps its slot (concurrent creations pruned each other before)', async () => {
    const usage = new TenantUsage(redis, keys);
    const owner = tenant('writing');
    await usage.admitJob(owner, 'a', keys.doc('a'), 10, 60);
    await usage.admitJob(owner, 'b', keys.doc('b'), 10, 60);
    await expect(usage.admitJob(owner, 'c', keys.doc('c'), 10, 60)).rejects.toBeInstanceOf(QuotaExceededError);
    expect((await usage.figures('writing')).activeJobs).toBe(2);
    // A finished document frees its slot at the next admission.
    await redis.hset(keys.doc('a'), 'status', 'succeeded');
    await usage.admitJob(owner, 'c', keys.doc('c'), 10, 60);
    expect(ADMITTED_GRACE_MS).toBeGreaterThanOrEqual(60_000);
  });

  it('one whose document never came gives its slot back after the grace; a release gives it back at once', async () => {
    const usage = new TenantUsage(redis, keys, 200);
    const owner = tenant('crashed');
    await usage.admitJob(owner, 'x', keys.doc('x'), 10, 60);
    await usage.admitJob(owner, 'y', keys.doc('y'), 10, 60);
    await expect(usage.admitJob(owner, 'z', keys.doc('z'), 10, 60)).rejects.toBeInstanceOf(QuotaExceededError);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await usage.admitJob(owner, 'z', keys.doc('z'), 10, 60);
    expect((await usage.figures('crashed')).activeJobs).toBe(1);
    await usage.release('crashed', keys.doc('z'), 'z');
    expect((await usage.figures('crashed')).activeJobs).toBe(0);
    expect(await redis.hlen(keys.ownerAdmitted('crashed'))).toBe(0);
  });
});
