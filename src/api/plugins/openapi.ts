/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas (@fastify/swagger with
 * fastify-type-provider-zod's transforms), served at /openapi.json, and Swagger UI at /docs.
 * openapi/openapi.json is the same document, committed (npm run openapi regenerates it, with the
 * default configuration). It names no host: its one server is relative (`/`), so a client resolves
 * it against wherever it fetched the document, and generated clients take their base URL.
 * Descriptions are CommonMark (Swagger UI renders them): placeholders are written `{code}` or in
 * code spans, never `<code>`, which would be read as an HTML tag.
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { withConfiguredLimits } from '../schemas/limits.js';
import { enumKeyedMapsAsProperties } from '../schemas/openApiEnumMaps.js';
import { tuplesAsBoundedArrays } from '../schemas/openApiTuples.js';
import { BEARER_SCHEME, BEARER_SECURITY_SCHEME } from './auth.js';

export const API_VERSION = '1.0.0';
/** The license of package.json (test/api/openapi.test.ts checks that they agree). */
export const LICENSE = { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' };
/** The service itself, relative to the document's own URL (OpenAPI 3.1 4.8.5.1): no host is written in. */
export const SERVER = {
  url: '/',
  description: 'This service: the origin the document was fetched from (`npm start` serves it at http://127.0.0.1:3000 by default).',
};

const DESCRIPTION = [
  'Solves A x = b the way a taskmaster and m machines would: six distributed algorithms (APC, D-HBM, DGD, D-NAG, block Cimmino,',
  'Mou-Liu-Morse) and the heterogeneity analysis that predicts which is faster.',
  '',
  'Jobs run asynchronously: POST /v1/jobs answers 202 with the job; follow it with GET /v1/jobs/{id} or the event stream',
  'GET /v1/jobs/{id}/events.',
  '',
  'JSON request bodies may be sent as is or gzip-compressed (`Content-Encoding: gzip`); BODY_LIMIT_BYTES bounds them either way.',
  '',
  'Errors are RFC 9457 problem details (`application/problem+json`). Their `type` is a relative URI `/problems/{code}`',
  '(GET it for a description); `code` repeats its last segment.',
  '',
  'With AUTH_MODE=keys, `/v1` calls need an API key (`Authorization: Bearer ...`) and are limited per key: every answer',
  'counted against it carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, and a 429 also `Retry-After`.',
].join('\n');

/** The tags of the operations, each described (test/api/openapi.test.ts checks that every tag used is here). */
export const TAGS = [
  { name: 'jobs', description: 'Analyses and solves: submit, follow (polling or Server-Sent Events), cancel, delete' },
  { name: 'runs', description: "Outputs of an algorithm's run: its trace and its solution" },
  { name: 'matrices', description: 'Matrix Market matrices uploaded once, for many jobs and studies' },
  { name: 'studies', description: "Grids of settings x seeded samples x metrics (the paper's experiments), their samples and figures" },
  { name: 'operations', description: 'Health, readiness, metrics, problem types' },
  { name: 'keys', description: 'API keys and their quotas (admin)' },
];

/**
 * Registers the document generator (before any route) and Swagger UI. The document states the
 * input limits of `config` (schemas/limits.ts) and, with AUTH_MODE=none, that a key is optional (plugins/auth.ts).
 */
export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Distributed linear systems service',
        version: API_VERSION,
        description: DESCRIPTION,
        contact: { name: 'The maintainers of linear-systems-service (see README.md)' },
        license: LICENSE,
      },
      servers: [SERVER],
      tags: TAGS,
      components: { securitySchemes: { [BEARER_SCHEME]: BEARER_SECURITY_SCHEME } },
    },
    transform: withResponseHeaders,
    transformObject: (document) =>
      withoutUnusedSchemas(
        withInternalErrors(
          withConfiguredLimits(enumKeyedMapsAsProperties(tuplesAsBoundedArrays(jsonSchemaTransformObject(document))), config),
        ),
      ),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
}

type OpenApiObject = { paths?: unknown; components?: { schemas?: Record<string, unknown> } };

/**
 * The zod transform emits every registered schema twice (its input and output forms); keep only
 * the components that the paths reach, so that the document and generated clients stay lean.
 */
function withoutUnusedSchemas<T>(input: T): T {
  const document = input as OpenApiObject;
  const schemas = document.components?.schemas;
  if (!schemas) return input;
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
          const name = value.slice('#/components/schemas/'.length);
          if (!used.has(name)) {
            used.add(name);
            visit(schemas[name]);
          }
        } else visit(value);
      }
    }
  };
  visit(document.paths);
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...document, components: { ...document.components, schemas: kept } } as T;
}

type RouteDocument = Parameters<typeof jsonSchemaTransform>[0];
type ResponseHeaders = Record<string, { description?: string; required?: boolean } & Record<string, unknown>>;

/**
 * fastify-type-provider-zod's transform, keeping the `headers` that a response given by content
 * type declares (its transform drops them): e.g. the Location of POST /v1/jobs's 202. Each header
 * is a JSON Schema with its `description` and, for the document, `required`.
 */
function withResponseHeaders(route: RouteDocument): ReturnType<typeof jsonSchemaTransform> {
  const transformed = jsonSchemaTransform(route);
  const declared = (route.schema as { response?: Record<string, { headers?: ResponseHeaders }> } | undefined)?.response;
  const responses = (transformed.schema as { response?: Record<string, Record<string, unknown>> } | undefined)?.response;
  if (declared && responses) {
    for (const [status, response] of Object.entries(declared)) {
      if (response.headers && responses[status]) responses[status].headers = response.headers;
    }
  }
  return transformed;
}

type OperationObject = { responses?: Record<string, ResponseObject> };
type ResponseObject = { headers?: Record<string, { required?: boolean; schema?: Record<string, unknown> }> };

/**
 * Every operation can answer 500: the one error handler (plugins/problems.ts) turns any unexpected
 * error into an `internal-error` problem, so the document declares it once for all of them. And
 * @fastify/swagger copies a response header's `required` into its schema: move it to the header.
 */
function withInternalErrors<T>(input: T): T {
  const document = input as { paths?: Record<string, Record<string, OperationObject>> };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const responses = operation.responses;
      if (!responses) continue;
      for (const response of Object.values(responses)) {
        for (const header of Object.values(response.headers ?? {})) {
          if (typeof header.schema?.required !== 'boolean') continue;
          header.required = header.schema.required;
          delete header.schema.required;
        }
      }
      responses['500'] ??= {
        description: 'Internal error (`internal-error`): the cause is in the service logs, not in the answer.',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      } as ResponseObject;
    }
  }
  return input;
}

/** The document as served (routes must be registered and the app ready). */
export function openApiDocument(app: FastifyInstance): unknown {
  return app.swagger();
}
