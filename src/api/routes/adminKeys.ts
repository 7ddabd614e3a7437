/**
 * /v1/admin/keys: API keys, managed by an admin key (AUTH_MODE=keys; the auth hook answers 401/403
 * before these handlers). The secret is in the creation's answer only. Revocation (DELETE) is
 * effective at once on every API instance, since each request looks its key up in Redis.
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { ApiKeyService } from '../../jobs/apiKeys/apiKey.js';
import { ApiKeyIdParamsSchema, ApiKeyListSchema, ApiKeySchema, CreatedApiKeySchema, NewApiKeySchema } from '../schemas/apiKey.js';
import { JSON_BODY_400, JSON_BODY_413, problemResponse, problemResponses } from '../schemas/problem.js';
import { jsonResponse } from '../schemas/responses.js';

const BAD_ID = problemResponse(400, 'The id is longer than 64 characters (`invalid-request`).');
const NO_SUCH_KEY = problemResponse(404, 'No API key with this id (`key-not-found`).');

export const adminKeyRoutes: FastifyPluginCallbackZod<{ keys: ApiKeyService }> = (app, { keys }, done) => {
  app.post(
    '/admin/keys',
    {
      schema: {
        tags: ['keys'],
        operationId: 'createApiKey',
        summary: 'Create an API key (admin)',
        description:
          'Answers 201 with the key and its secret `key`, shown only here (the service keeps its SHA-256). Optional per-key ' +
          'quotas override the configured limits.',
        body: NewApiKeySchema,
        response: {
          201: {
            description: 'The key, with its secret.',
            headers: {
              Location: { type: 'string', description: 'The URL of the key, `/v1/admin/keys/{id}`.', required: true },
            },
            content: { 'application/json': { schema: CreatedApiKeySchema } },
          },
          ...problemResponse(400, `${JSON_BODY_400}.`),
          ...problemResponse(413, `${JSON_BODY_413}.`),
          ...problemResponses(408, 415, 503),
        },
      },
    },
    async (request, reply) => {
      const created = await keys.create(request.body);
      request.log.info({ keyId: created.id, name: created.name, admin: created.admin }, 'API key created');
      return reply.code(201).header('location', `/v1/admin/keys/${created.id}`).send(created);
    },
  );

  app.get(
    '/admin/keys',
    {
      schema: {
        tags: ['keys'],
        operationId: 'listApiKeys',
        summary: 'List API keys (admin)',
        description: 'Every key, revoked ones included, oldest first; never their secrets.',
        response: { 200: jsonResponse('Every API key, oldest first, without secrets.', ApiKeyListSchema), ...problemResponses(503) },
      },
    },
    async () => ({ items: await keys.list() }),
  );

  app.get(
    '/admin/keys/:id',
    {
      schema: {
        tags: ['keys'],
        operationId: 'getApiKey',
        summary: 'An API key (admin)',
        description: 'Its name, creation and last-use times, quotas and revocation time.',
        params: ApiKeyIdParamsSchema,
        response: {
          200: jsonResponse('The API key, without its secret.', ApiKeySchema),
          ...BAD_ID,
          ...NO_SUCH_KEY,
          ...problemResponses(503),
        },
      },
    },
    async (request) => keys.get(request.params.id),
  );

  app.delete(
    '/admin/keys/:id',
    {
      schema: {
        tags: ['keys'],
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key (admin)',
        description:
          'Refused from the next request on, on every API instance. The key stays listed (with `revokedAt`); its jobs and ' +
          'matrices are kept until they expire. Revoking twice is harmless. Answers the key.',
        params: ApiKeyIdParamsSchema,
        response: {
          200: jsonResponse('The API key, revoked (with `revokedAt`).', ApiKeySchema),
          ...BAD_ID,
          ...NO_SUCH_KEY,
          ...problemResponses(503),
        },
      },
    },
    async (request) => {
      const revoked = await keys.revoke(request.params.id);
      request.log.info({ keyId: revoked.id }, 'API key revoked');
      return revoked;
    },
  );
  done();
};
