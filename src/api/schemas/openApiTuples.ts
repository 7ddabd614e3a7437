/**
 * How the OpenAPI document writes the fixed-length tuples of these schemas (Analysis' thetaHPair,
 * the COO `entries`). zod emits the JSON Schema 2020-12 form, `prefixItems: [...]` with
 * `items: false`: valid OpenAPI 3.1, but common tools read it wrong. Stoplight Prism validates with
 * draft-07 rules, which ignore `prefixItems`, so `items: false` forbids every element (it rejected
 * every valid COO request and every analysis response); Spectral's `array-items` rule requires an
 * `items` schema; openapi-generator ignores `prefixItems`; @hey-api/openapi-ts appends a sibling
 * `items` schema to the tuple as one more element. An array whose `items` admits what any position
 * may hold, with `minItems` = `maxItems` = the length, reads right in all of them, and
 * openapi-typescript (with --array-length) and @hey-api/openapi-ts still turn it into a TypeScript
 * tuple. The server keeps validating each position: the zod schemas stay tuples.
 */

type JsonSchemaNode = Record<string, unknown>;

const isObject = (value: unknown): value is JsonSchemaNode => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The document (or any part of it) with every closed tuple written as an array of bounded length. */
export function tuplesAsBoundedArrays<T>(document: T): T {
  return rewrite(document) as T;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (!isObject(node)) return node;
  const copy: JsonSchemaNode = {};
  for (const [key, value] of Object.entries(node)) copy[key] = rewrite(value);
  const { prefixItems, items } = copy;
  if (!Array.isArray(prefixItems) || items !== false) return copy;
  // `items` takes the place of `prefixItems`; the other keywords keep theirs.
  const array: JsonSchemaNode = {};
  for (const [key, value] of Object.entries(copy)) {
    if (key === 'prefixItems') array.items = anyOf(prefixItems);
    else if (key !== 'items') array[key] = value;
  }
  return { ...array, minItems: prefixItems.length, maxItems: prefixItems.length };
}

/** A schema admitting what any of `schemas` admits: the one schema when they are all the same. */
function anyOf(schemas: unknown[]): unknown {
  const distinct = [...new Map(schemas.map((schema) => [JSON.stringify(schema), schema])).values()];
  return distinct.length === 1 ? distinct[0] : { anyOf: distinct };
}
