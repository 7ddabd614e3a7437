/**
 * How the OpenAPI document writes the maps keyed by an enum (a job's `runs`, the recommendation's
 * `predictedIterations`, the bounds' `table1`, the options' `parameters`: one entry per algorithm).
 * zod emits `propertyNames: { $ref: AlgorithmId }` with `additionalProperties: <value>`, which
 * openapi-typescript reads as `{ [key: string]: <value> }` (it ignores `propertyNames`), so a typo such
 * as `runs.apcc` compiles in a generated client. The same constraint written as one optional property
 * per enum value and `additionalProperties: false` validates the same objects and types each key.
 */

type JsonSchemaNode = Record<string, unknown>;

const isObject = (value: unknown): value is JsonSchemaNode => value !== null && typeof value === 'object' && !Array.isArray(value);
const COMPONENT = '#/components/schemas/';

/** The document with every map whose keys are a component's string enum written with those keys as its properties. */
export function enumKeyedMapsAsProperties<T>(document: T): T {
  const schemas = (document as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
  const enumOf = (names: unknown): string[] | null => {
    const ref = isObject(names) && typeof names.$ref === 'string' && names.$ref.startsWith(COMPONENT) ? names.$ref : null;
    const target = ref === null ? names : schemas[ref.slice(COMPONENT.length)];
    return isObject(target) && Array.isArray(target.enum) && target.enum.every((v) => typeof v === 'string') ? target.enum : null;
  };
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!isObject(node)) return node;
    const copy: JsonSchemaNode = {};
    for (const [key, value] of Object.entries(node)) copy[key] = rewrite(value);
    const keys = enumOf(copy.propertyNames);
    if (keys === null || !isObject(copy.additionalProperties) || copy.properties !== undefined) return copy;
    const { propertyNames: _names, additionalProperties: value, ...rest } = copy;
    return { ...rest, properties: Object.fromEntries(keys.map((key) => [key, value])), additionalProperties: false };
  };
  return rewrite(document) as T;
}
