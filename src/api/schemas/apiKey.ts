/**
 * API keys as the admin endpoints (/v1/admin/keys) take and return them. ApiKey, CreatedApiKey and
 * NewApiKey of src/jobs/apiKeys/apiKey.ts are the definitions; the schemas are checked against them.
 */
import { z } from 'zod';
import type { ApiKey, CreatedApiKey, KeyQuotas, NewApiKey } from '../../jobs/apiKeys/apiKey.js';
import { assertSameShape } from './sameShape.js';

export const KeyQuotasSchema = z
  .object({
    requestsPerSecond: z.number().int().min(1).optional().describe('Requests per second (default RATE_LIMIT_PER_SECOND).'),
    activeJobs: z.number().int().min(1).optional().describe('Jobs queued or running at once (default MAX_ACTIVE_JOBS_PER_KEY).'),
    storedBytes: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Bytes kept stored: matrices, job inputs, solutions, traces (default MAX_STORED_BYTES_PER_KEY).'),
    studySamples: z.number().int().min(1).optional().describe('Samples of one study (default MAX_STUDY_SAMPLES_PER_KEY).'),
  })
  .strict()
  .meta({ id: 'KeyQuotas', description: "Per-key overrides of the configured limits; absent fields take the configuration's defaults." });

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    admin: z.boolean().describe('Admin keys manage keys, see every tenant, and read /metrics and /admin/*.'),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable().describe('The last request made with the key (null: never used).'),
    revokedAt: z.string().nullable().describe('When it was revoked (refused from then on); null while live.'),
    quotas: KeyQuotasSchema,
  })
  .meta({ id: 'ApiKey', description: 'An API key, without its secret (only its SHA-256 is stored).' });

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().describe('The secret, shown this once: send it as `Authorization: Bearer <key>`.'),
}).meta({ id: 'CreatedApiKey', description: 'A new API key, with its secret (shown only in this answer).' });

export const NewApiKeySchema = z
  .object({
    name: z.string().min(1).max(100).describe('Who or what uses the key.'),
    admin: z.boolean().optional().describe('An admin key (default false).'),
    quotas: KeyQuotasSchema.optional(),
  })
  .strict()
  .meta({ id: 'NewApiKey' });

export const ApiKeyListSchema = z.object({ items: z.array(ApiKeySchema) }).meta({ id: 'ApiKeyList' });
export const ApiKeyIdParamsSchema = z.object({ id: z.string().min(1).max(64) });

assertSameShape<z.output<typeof KeyQuotasSchema>, KeyQuotas>(true);
assertSameShape<z.output<typeof ApiKeySchema>, ApiKey>(true);
assertSameShape<z.output<typeof CreatedApiKeySchema>, CreatedApiKey>(true);
assertSameShape<z.output<typeof NewApiKeySchema>, NewApiKey>(true);
