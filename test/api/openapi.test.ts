/**
 * The OpenAPI document: the committed openapi/openapi.json is exactly what the app serves (run
 * `npm run openapi` when this fails), the committed client types are generated from it (run
 * `npm run generate:client`), and a client built on them (openapi-fetch) completes a job.
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatOpenApi, generateOpenApi, OPENAPI_PATH } from '../../scripts/generateOpenapi.js';
import type { paths } from '../client/schema.js';
import { startTestService, type TestService } from '../support/service.js';

const CLIENT_TYPES_PATH = new URL('../client/schema.d.ts', import.meta.url);

interface OpenApiDocument {
  info: { license?: { name: string }; contact?: { name?: string } };
  servers?: { url: string; description?: string }[];
  paths: Record<
    string,
    Record<string, { description?: string; requestBody?: unknown; responses: Record<string, { headers?: Record<string, unknown> }> }>
  >;
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

  it('names its servers, contact and license (the license of package.json)', async () => {
    const document = JSON.parse(await readFile(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
    const packageJson = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { license: string };
    expect(document.info.license?.name).toBe(packageJson.license);
    expect(document.info.contact?.name).toEqual(expect.stringMatching(/\S/));
    expect(document.servers).toHaveLength(1);
    expect(document.servers?.[0].url).toBe('http://127.0.0.1:3000');
    expect(document.servers?.[0].description).toMatch(/npm start/);
  });

  it('has committed client types generated from it (npm run generate:client)', async () => {
    const generated = astToString(await openapiTS(pathToFileURL(OPENAPI_PATH), { arrayLength: true }));
    const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
    expect(committed.endsWith(generated), 'test/client/schema.d.ts is stale: run `npm run generate:client`').toBe(true);
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
    expect(job.result!.analysis.m).toBe(4);
    expect(job.result!.runs.apc.status).toBe('converged');

    const solution = await client.GET('/v1/jobs/{id}/runs/{algorithm}/solution', { params: { path: { id, algorithm: 'cimmino' } } });
    expect(solution.data!.x).toHaveLength(16);

    const missing = await client.GET('/v1/jobs/{id}', { params: { path: { id: 'no-such-job' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'job-not-found', status: 404 });

    const page = await client.GET('/v1/jobs', { params: { query: { limit: 1 } } });
    expect(page.data!.items[0].id).toBe(id);
  });
});
