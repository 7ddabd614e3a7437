/**
 * The OpenAPI document: the committed openapi/openapi.json is exactly what the app serves (run
 * `npm run openapi` when this fails), the committed client types are generated from it (run
 * `npm run generate:client`), and a client built on them (openapi-fetch) completes a job.
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { createConfig, lint } from '@redocly/openapi-core';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatOpenApi, generateOpenApi, OPENAPI_PATH, openApiDocumentWith } from '../../scripts/generateOpenapi.js';
import { loadConfig } from '../../src/config.js';
import type { paths } from '../../src/dashboard/apiSchema.js';
import { startTestService, type TestService } from '../support/service.js';

const CLIENT_TYPES_PATH = new URL('../../src/dashboard/apiSchema.d.ts', import.meta.url);

interface OperationObject {
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses: Record<string, { description?: string; headers?: Record<string, { required?: boolean }> }>;
}
interface OpenApiDocument {
  info: { description?: string; license?: { name: string }; contact?: { name?: string } };
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const readDocument = async (): Promise<OpenApiDocument> => JSON.parse(await readFile(OPENAPI_PATH, 'utf8')) as OpenApiDocument;

function operationsOf(document: OpenApiDocument): { name: string; path: string; operation: OperationObject }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, operation })),
  );
}

/** Every string under `key` (description, summary...) in the document, with where it is. */
function textsOf(node: unknown, keys: string[], at = ''): { at: string; text: string }[] {
  if (Array.isArray(node)) return node.flatMap((item, k) => textsOf(item, keys, `${at}/${k}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    keys.includes(key) && typeof value === 'string' ? [{ at: `${at}/${key}`, text: value }] : textsOf(value, keys, `${at}/${key}`),
  );
}

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
});

afterAll(async () => {
  await service?.close();
});

describe('the OpenAPI document', () => {
  it('is committed as served (npm run openapi regenerates it)', async () => {
    const committed = await readFile(OPENAPI_PATH, 'utf8');
    const served = await service.app.inject({ url: '/openapi.json' });
    expect(served.statusCode).toBe(200);
    expect(formatOpenApi(served.json()), 'openapi/openapi.json is stale: run `npm run openapi`').toBe(committed);
    expect(await generateOpenApi()).toBe(committed);
    expect(served.json<{ openapi: string }>().openapi).toBe('3.1.0');
  });

  it('declares what each operation answers: 500, 400 for a bad id, 503 where Redis is read, 413/415 where it takes a body', async () => {
    const document = JSON.parse(await readFile(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, operation })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(12);
    for (const { name, path, method, operation } of operations) {
      const statuses = Object.keys(operation.responses);
      expect(operation.description, name).toEqual(expect.stringMatching(/\S/));
      expect(statuses, name).toContain('500');
      if (path.startsWith('/v1/jobs/{id}')) expect(statuses, name).toContain('400');
      if (path.startsWith('/v1/') || path === '/readyz') expect(statuses, name).toContain('503');
      expect(statuses.includes('415'), name).toBe(operation.requestBody !== undefined);
      expect(statuses.includes('413'), name).toBe(operation.requestBody !== undefined);
      if (method === 'post' && path === '/v1/jobs') {
        expect(operation.responses['202'].headers?.Location, name).toMatchObject({ required: true, schema: { type: 'string' } });
      }
    }
  });

  it('names its contact and license (the license of package.json), and no host: its one server is relative', async () => {
    const document = await readDocument();
    const packageJson = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { license: string };
    expect(document.info.license?.name).toBe(packageJson.license);
    expect(document.info.contact?.name).toEqual(expect.stringMatching(/\S/));
    // Generated clients take their base URL from here: the origin the document was fetched from, whatever it is.
    expect(document.servers?.map((server) => server.url)).toEqual(['/']);
    expect(document.servers?.[0].description).toMatch(/origin the document was fetched from/);
    const served: unknown = await (await fetch(`${service.baseUrl}/openapi.json`)).json();
    expect(served).toEqual(document);
  });

  it('describes every response (none is a "Default Response") and declares, with a description, every tag it uses', async () => {
    const document = await readDocument();
    const declared = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]));
    for (const { name, operation } of operationsOf(document)) {
      expect(operation.tags, name).toHaveLength(1);
      for (const tag of operation.tags ?? []) expect(declared.get(tag), `${name}: tag ${tag}`).toEqual(expect.stringMatching(/\S/));
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.description, `${name} ${status}`).toEqual(expect.stringMatching(/\S/));
        expect(response.description, `${name} ${status}`).not.toMatch(/^(Default Response|Problem)$/);
      }
    }
    // Study answers speak of studies, not of jobs (but for those of every /v1 operation: 401, 429 and 500).
    const studies = operationsOf(document).filter(({ path }) => path.startsWith('/v1/studies'));
    for (const { name, operation } of studies) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (['401', '429', '500'].includes(status)) continue;
        expect(response.description, `${name} ${status}`).not.toMatch(/\bjobs?\b/i);
      }
    }
    const figure = document.paths['/v1/studies/{id}/figures/{name}'].get.responses['404'].description;
    expect(figure).toMatch(/`figure-not-found`/);
  });

  it('lets anonymous calls through with AUTH_MODE=none (the empty requirement beside the bearer scheme), not with AUTH_MODE=keys', async () => {
    const anonymous = await readDocument(); // generated with the default configuration: AUTH_MODE=none on a loopback HOST
    expect(loadConfig({}).AUTH_MODE).toBe('none');
    const keys = (await openApiDocumentWith({ AUTH_MODE: 'keys' })) as OpenApiDocument;
    for (const [document, withKey] of [
      [anonymous, [{ bearerAuth: [] }, {}]],
      [keys, [{ bearerAuth: [] }]],
    ] as const) {
      for (const { name, path, operation } of operationsOf(document)) {
        const open = !(path.startsWith('/v1/') || path === '/metrics');
        expect(operation.security, name).toEqual(open ? [] : withKey);
      }
    }
  });

  it('declares the Retry-After and RateLimit-* headers of every 429', async () => {
    const document = await readDocument();
    const tooMany = operationsOf(document).filter(({ operation }) => operation.responses['429']);
    expect(tooMany.length).toBeGreaterThan(20);
    for (const { name, operation } of tooMany) {
      const headers = operation.responses['429'].headers ?? {};
      expect(Object.keys(headers).sort(), name).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
      expect(headers['Retry-After'].required, name).toBe(true);
    }
  });

  it('states the input limits of the configuration it is generated with', async () => {
    const limits = (document: OpenApiDocument) => {
      const schemas = document.components.schemas;
      const forms = (schemas.MatrixInput.oneOf as { properties: Record<string, Record<string, unknown>> }[]).map((form) => form.properties);
      const [dense, coo, matrixMarket] = forms;
      // rhs: one vector, or a list of vectors (each limited like one), nullable.
      const [one, several] = (schemas.CreateJobRequestInput.properties as Record<string, { anyOf: { anyOf: Record<string, unknown>[] }[] }>)
        .rhs.anyOf[0].anyOf;
      return {
        denseRows: dense.data.maxItems,
        denseRow: schemas.DenseRowInput.maxItems,
        cooN: coo.rows.maximum,
        cooEntries: coo.entries.maxItems,
        matrixMarketText: matrixMarket.data.maxLength,
        rhs: one.maxItems,
        rhsEach: (several.items as Record<string, unknown>).maxItems,
        rhsColumns: several.maxItems,
      };
    };
    const defaults = loadConfig({});
    expect(limits(await readDocument())).toEqual({
      denseRows: defaults.MAX_N,
      denseRow: defaults.MAX_N,
      cooN: defaults.MAX_N_SPARSE,
      cooEntries: defaults.MAX_NNZ,
      matrixMarketText: defaults.BODY_LIMIT_BYTES,
      rhs: Math.max(defaults.MAX_N, defaults.MAX_N_SPARSE),
      rhsEach: Math.max(defaults.MAX_N, defaults.MAX_N_SPARSE),
      rhsColumns: defaults.MAX_RHS,
    });
    const small = (await openApiDocumentWith({
      MAX_N: '50',
      MAX_N_SPARSE: '70',
      MAX_NNZ: '900',
      BODY_LIMIT_BYTES: '4096',
      MAX_RHS: '5',
    })) as OpenApiDocument;
    expect(limits(small)).toEqual({
      denseRows: 50,
      denseRow: 50,
      cooN: 70,
      cooEntries: 900,
      matrixMarketText: 4096,
      rhs: 70,
      rhsEach: 70,
      rhsColumns: 5,
    });
    expect(JSON.stringify(small)).not.toContain('x-limit');
  });

  it('writes no raw HTML in its descriptions (Swagger UI renders them as Markdown: a "<code>" would vanish)', async () => {
    const document = await readDocument();
    const texts = textsOf(document, ['description', 'summary', 'title']);
    expect(texts.length).toBeGreaterThan(100);
    for (const { at, text } of texts) {
      const outsideCode = text.replace(/`[^`]*`/g, '');
      expect(outsideCode, at).not.toMatch(/<[A-Za-z/!?]/);
    }
    expect(document.info.description).toContain('`/problems/{code}`');
  });

  it("passes Redocly's recommended-strict rules, but for a 4xx of /healthz and /readyz (they answer none)", async () => {
    const config = await createConfig({
      extends: ['recommended-strict'],
      rules: {
        'operation-tag-defined': 'error',
        'tag-description': 'error',
        'operation-description': 'error',
        'operation-summary': 'error',
        'operation-singular-tag': 'error',
        'info-contact': 'error',
        'no-empty-servers': 'error',
        'no-ambiguous-paths': 'error',
        'no-unused-components': 'error',
      },
    });
    const problems = await lint({ ref: OPENAPI_PATH, config });
    const found = problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer ?? ''}: ${problem.message}`);
    expect(found).toEqual([
      'operation-4xx-response #/paths/~1healthz/get/responses: Operation must have at least one `4XX` response.',
      'operation-4xx-response #/paths/~1readyz/get/responses: Operation must have at least one `4XX` response.',
    ]);
  });

  it('has committed client types generated from it (npm run generate:client)', async () => {
    const generated = astToString(await openapiTS(pathToFileURL(OPENAPI_PATH), { arrayLength: true }));
    const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
    expect(committed.endsWith(generated), 'src/dashboard/apiSchema.d.ts is stale: run `npm run generate:client`').toBe(true);
  });

  it('drives the service through a generated client (openapi-fetch)', async () => {
    const client = createClient<paths>({ baseUrl: service.baseUrl });
    const created = await client.POST('/v1/jobs', {
      body: {
        type: 'solve',
        matrix: { format: 'generator', generator: 'structured-gaussian', n: 16, blockSize: 4, sigma: 0.2, seed: 4 },
        partition: { machines: 4 },
        algorithms: ['apc', 'cimmino'],
      },
    });
    expect(created.response.status).toBe(202);
    const id = created.data!.id;

    let job = created.data!;
    const deadline = Date.now() + 60_000;
    while (job.status === 'queued' || job.status === 'running') {
      if (Date.now() > deadline) throw new Error(`job ${id} did not finish`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { data, error } = await client.GET('/v1/jobs/{id}', { params: { path: { id } } });
      expect(error).toBeUndefined();
      job = data!;
    }
    expect(job.status).toBe('succeeded');
    expect(job.result!.analysis!.m).toBe(4);
    expect(job.result!.runs.apc!.status).toBe('converged');
    // The maps keyed by algorithm are typed by their keys (npm run typecheck): a typo does not compile.
    // @ts-expect-error 'apcc' is no algorithm.
    expect(job.result!.runs.apcc).toBeUndefined();

    const path = { id, algorithm: 'cimmino' } as const;
    const solution = (await client.GET('/v1/jobs/{id}/runs/{algorithm}/solution', { params: { path } })).data!;
    // The solution comes in four media types (JSON by default): the client's type is their union.
    if (typeof solution === 'string') throw new Error('expected the JSON solution');
    expect(solution.x).toHaveLength(16);
    const csv = await client.GET('/v1/jobs/{id}/runs/{algorithm}/solution', {
      params: { path },
      headers: { accept: 'text/csv' },
      parseAs: 'text',
    });
    expect(csv.response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.data).toMatch(/^index,x\n0,/);

    const missing = await client.GET('/v1/jobs/{id}', { params: { path: { id: 'no-such-job' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'job-not-found', status: 404 });

    const page = await client.GET('/v1/jobs', { params: { query: { limit: 1 } } });
    expect(page.data!.items[0].id).toBe(id);
  });
});
