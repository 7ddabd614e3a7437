/**
 * Tuples in the OpenAPI document are arrays of bounded length (no `prefixItems` + `items: false`,
 * which Prism, Spectral and openapi-generator read wrong), while the server still checks each
 * position: a COO entry of two elements is a 400 naming it.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tuplesAsBoundedArrays } from '../../../src/api/schemas/openApiTuples.js';
import { OPENAPI_PATH } from '../../../scripts/generateOpenapi.js';
import { runJob, startTestService, type TestService } from '../../support/service.js';

type Schema = Record<string, unknown>;

/** The value at a JSON pointer (RFC 6901: '~1' is '/', '~0' is '~', as in the paths' names). */
const at = (node: unknown, pointer: string): unknown =>
  pointer === ''
    ? node
    : pointer
        .split('/')
        .slice(1)
        .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((parent, key) => (parent as Schema)[key], node);

const escaped = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every schema object of `node` with `keyword`, by JSON pointer. */
function withKeyword(node: unknown, keyword: string, path = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((child, i) => withKeyword(child, keyword, `${path}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  const own = keyword in node ? [path] : [];
  return [...own, ...Object.entries(node).flatMap(([key, child]) => withKeyword(child, keyword, `${path}/${escaped(key)}`))];
}

describe('tuplesAsBoundedArrays', () => {
  it('writes a closed tuple as an array whose items admit any position, of exactly its length', () => {
    const generated = z.toJSONSchema(z.object({ pair: z.tuple([z.number().int(), z.number().int()]).nullable() }));
    expect(withKeyword(generated, 'prefixItems')).toEqual(['/properties/pair/anyOf/0']);
    const rewritten = tuplesAsBoundedArrays(generated);
    expect(at(rewritten, '/properties/pair/anyOf/0')).toEqual({
      type: 'array',
      items: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      minItems: 2,
      maxItems: 2,
    });
    expect(withKeyword(rewritten, 'prefixItems')).toEqual([]);
  });

  it('admits each distinct position once, and leaves other arrays alone', () => {
    const generated = z.toJSONSchema(z.array(z.tuple([z.number().int(), z.number().int(), z.string()])));
    expect(at(tuplesAsBoundedArrays(generated), '/items')).toEqual({
      type: 'array',
      items: { anyOf: [{ type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }, { type: 'string' }] },
      minItems: 3,
      maxItems: 3,
    });
    const plain = z.toJSONSchema(z.array(z.number()).min(1));
    expect(tuplesAsBoundedArrays(plain)).toEqual(plain);
  });
});

describe('the OpenAPI document', () => {
  it('has no prefixItems and no `items: false`; thetaHPair and the COO entries are bounded arrays', async () => {
    const document: unknown = JSON.parse(await readFile(OPENAPI_PATH, 'utf8'));
    expect(withKeyword(document, 'prefixItems')).toEqual([]);
    const itemsFalse = withKeyword(document, 'items').filter((pointer) => at(document, `${pointer}/items`) === false);
    expect(itemsFalse).toEqual([]);

    const pair = at(document, '/components/schemas/Analysis/properties/heterogeneity/properties/thetaHPair/anyOf/0');
    expect(pair).toMatchObject({ type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 });
    const forms = at(document, '/components/schemas/MatrixInput/oneOf') as Schema[];
    const coo = forms.find((form) => at(form, '/properties/format/const') === 'coo');
    expect(at(coo, '/properties/entries/items')).toMatchObject({ type: 'array', minItems: 3, maxItems: 3 });
  });
});

describe('COO entries on the server', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService();
  });

  afterAll(async () => {
    await service?.close();
  });

  const coo = (entries: unknown[]) => ({
    type: 'analyze',
    matrix: { format: 'coo', rows: 2, cols: 2, entries },
    partition: { machines: 2 },
  });

  it.each([
    ['two elements', [0, 0]],
    ['four elements', [0, 0, 1, 2]],
    ['a non-integer index', [0.5, 0, 1]],
  ])('answers 400 naming an entry with %s', async (_case, entry) => {
    const response = await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: coo([[1, 1, 3], entry]) });
    expect(response.statusCode).toBe(400);
    const problem = response.json<{ code: string; errors: { path: string }[] }>();
    expect(problem.code).toBe('invalid-request');
    expect(problem.errors.map((error) => error.path)).toContainEqual(expect.stringMatching(/^\/matrix\/entries\/1(\/|$)/));
  });

  it('accepts [i, j, value] triplets and answers thetaHPair as a pair', async () => {
    const job = await runJob(
      service.app,
      coo([
        [0, 0, 2],
        [0, 1, 1],
        [1, 0, 1],
        [1, 1, 3],
        [1, 1, 1],
      ]),
    );
    expect(job.status).toBe('succeeded');
    expect(job.result?.analysis?.heterogeneity.thetaHPair).toEqual([0, 1]);
  });
});
