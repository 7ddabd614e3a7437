/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas (@fastify/swagger with
 * fastify-type-provider-zod's transforms), served at /openapi.json, and Swagger UI at /docs.
 * openapi/openapi.json is the same document, committed (npm run openapi regenerates it).
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { tuplesAsBoundedArrays } from '../schemas/openApiTuples.js';

export const API_VERSION = '1.0.0';

const DESCRIPTION = `Solves A x = b the way a taskmaster and m machines would: six distributed algorithms (APC, D-HBM, DGD, D-NAG, block Cimmino, Mou-Liu-Morse) and the heterogeneity analysis that predicts which is faster.

Jobs run asynchronously: POST /v1/jobs answers 202 with the job; follow it with GET /v1/jobs/{id} or the event stream GET /v1/jobs/{id}/events.

Errors are RFC 9457 problem details (application/problem+json). Their \`type\` is a relative URI "/problems/<code>" (GET it for a description); \`code\` repeats <code>.`;

/** Registers the document generator (before any route) and Swagger UI. */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Distributed linear systems service', version: API_VERSION, description: DESCRIPTION },
      tags: [
        { name: 'jobs', description: 'Analyses and solves' },
        { name: 'runs', description: "Outputs of an algorithm's run" },
        { name: 'operations', description: 'Health, readiness, metrics, problem types' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => withoutUnusedSchemas(tuplesAsBoundedArrays(jsonSchemaTransformObject(document))),
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

/** The document as served (routes must be registered and the app ready). */
export function openApiDocument(app: FastifyInstance): unknown {
  return app.swagger();
}
