/**
 * Maps keyed by an enum (one entry per algorithm) are written in the OpenAPI document with the enum's
 * values as optional properties and no others, where zod's `propertyNames: { $ref }` left generated
 * clients an untyped string index; a validator reads the same constraint either way.
 */
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { enumKeyedMapsAsProperties } from '../../../src/api/schemas/openApiEnumMaps.js';
import { ALGORITHM_IDS } from '../../../src/solvers/algorithms/registry.js';
import { OPENAPI_PATH } from '../../../scripts/generateOpenapi.js';

const Algorithm = z.enum(ALGORITHM_IDS).meta({ id: 'Algorithm' });
const Rates = z.partialRecord(Algorithm, z.number()).meta({ id: 'Rates' });

/** A document as zod writes the two schemas (its refs to the components, as the service's transform has them), then as the service publishes it. */
const defs = z.toJSONSchema(z.object({ rates: Rates }), { target: 'draft-2020-12' }).$defs;
const written = JSON.parse(JSON.stringify({ components: { schemas: defs } }).replaceAll('#/$defs/', '#/components/schemas/')) as {
  components: { schemas: Record<string, object> };
};
const published = enumKeyedMapsAsProperties(written);
/** A schema of `document` with its components where its refs point. */
const standalone = (document: typeof written, name: string): object => ({
  ...document.components.schemas[name],
  components: document.components,
});

describe('maps keyed by an enum in the OpenAPI document', () => {
  it('have the enum values as their properties, and no others', () => {
    expect(written.components.schemas.Rates).toMatchObject({ propertyNames: { $ref: '#/components/schemas/Algorithm' } });
    const rates = published.components.schemas.Rates as Record<string, unknown>;
    expect(rates.propertyNames).toBeUndefined();
    expect(Object.keys(rates.properties as object)).toEqual([...ALGORITHM_IDS]);
    expect(rates.additionalProperties).toBe(false);
  });

  it('accept and refuse the same objects as before', () => {
    const ajv = new Ajv2020({ strict: false });
    const before = ajv.compile(standalone(written, 'Rates'));
    const after = ajv.compile(standalone(published, 'Rates'));
    for (const value of [{}, { apc: 0.5 }, { apc: 0.5, mlm: 0.9 }, { apcc: 0.5 }, { apc: 'fast' }])
      expect(after(value), JSON.stringify(value)).toBe(before(value));
    expect(after({ apcc: 0.5 })).toBe(false);
  });

  it('the committed document has no map keyed by a component enum left', async () => {
    const text = await readFile(OPENAPI_PATH, 'utf8');
    expect(text).not.toMatch(/"propertyNames": \{\s*"\$ref"/);
    const document = JSON.parse(text) as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
    const result = document.components.schemas.JobResult.properties?.runs as { properties: Record<string, unknown> };
    expect(Object.keys(result.properties)).toEqual([...ALGORITHM_IDS]);
  });
});
