/**
 * The OpenAPI contract, checked on every response the API tests receive: its status must be one the
 * operation declares in openapi/openapi.json (the committed document), its declared headers must be
 * there and valid, its media type must be declared, and its body must match that response's schema
 * (the schemas are strict: an undeclared field is a violation). Schemas are checked by Ajv in JSON
 * Schema draft 2020-12 mode (the dialect of OpenAPI 3.1), resolving the document's components.
 *
 * `checkContract` is the hook the test service installs on every app it builds (an onSend hook, so
 * inject() and real HTTP alike are checked); a violation fails the test that received it, in an
 * afterEach hook registered by importing this module. Event streams (hijacked replies) pass no
 * onSend hook: test/api/contract.test.ts checks their status and media type itself.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { OPENAPI_PATH } from '../../scripts/generateOpenapi.js';

/** A response as the client received it. */
export interface ObservedResponse {
  method: string;
  /** The request's path (a query string is ignored). */
  url: string;
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The body as text ('' for none); undefined when it is not checked (an event stream). */
  body: string | undefined;
}

interface HeaderObject {
  required?: boolean;
  schema?: object;
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema?: object }>;
}
interface OperationObject {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, object> };
}

/** Routes the document leaves out on purpose: the document itself, Swagger UI, the dashboard's files and the queue board. */
const UNDOCUMENTED = [/^\/openapi\.json$/, /^\/docs(\/|$)/, /^\/(index\.html)?$/, /^\/assets\//, /^\/admin\/queues(\/|$)/];
const DOCUMENT_ID = 'urn:lss:openapi';
/** The top-level fields of an OpenAPI document, known to Ajv so that the document loads as a schema in strict mode. */
const OPENAPI_FIELDS = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'paths',
  'webhooks',
  'components',
  'security',
  'tags',
  'externalDocs',
];

const escapePointer = (segment: string): string => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
/** A path template's segment as a pattern: a parameter `{name}` matches one segment. */
const templateSegment = (segment: string): string =>
  /^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const mediaTypeOf = (contentType: string): string => contentType.split(';')[0].trim().toLowerCase();
const isJson = (mediaType: string): boolean => mediaType === 'application/json' || mediaType.endsWith('+json');

export class Contract {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  /** Path templates, literal ones first: /v1/jobs/{id} as a pattern with its template. */
  private readonly templates: { pattern: RegExp; template: string }[];

  constructor(readonly document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
    // A CommonJS module: its function is the default export's `default` under NodeNext.
    ajvFormats.default(this.ajv);
    this.ajv.addVocabulary(OPENAPI_FIELDS);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.templates = Object.keys(document.paths)
      .map((template) => ({
        template,
        parameters: (template.match(/\{[^}]+\}/g) ?? []).length,
        pattern: new RegExp(`^${template.split('/').map(templateSegment).join('/')}$`),
      }))
      .sort((a, b) => a.parameters - b.parameters);
  }

  static load(path: string = OPENAPI_PATH): Contract {
    return new Contract(JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument);
  }

  /** What in this response the document does not allow; empty when it keeps the contract. */
  violations(response: ObservedResponse): string[] {
    const path = response.url.split('?')[0];
    if (UNDOCUMENTED.some((pattern) => pattern.test(path))) return [];
    const method = response.method.toLowerCase() === 'head' ? 'get' : response.method.toLowerCase();
    const template = this.templates.find((candidate) => candidate.pattern.test(path))?.template;
    const operation = template === undefined ? undefined : this.document.paths[template][method];
    const name = `${response.method} ${path} -> ${response.statusCode}`;

    if (template === undefined || operation === undefined) {
      // No such operation: the service's not-found problem, or method-not-allowed (405, its Allow header naming the
      // document's methods of that path) where the path has other operations.
      if (template !== undefined && response.statusCode === 405) {
        const documented = Object.keys(this.document.paths[template])
          .filter((key) => ['get', 'put', 'post', 'delete', 'patch'].includes(key))
          .map((key) => key.toUpperCase());
        const allow = String(response.headers.allow ?? '').split(', ');
        const missing = documented.filter((m) => !allow.includes(m));
        if (missing.length > 0) return [`${name}: its Allow header (${allow.join(', ')}) lacks ${missing.join(', ')}`];
        return this.bodyViolations(name, 'components/schemas/Problem', response, 'application/problem+json');
      }
      if (response.statusCode !== 404) return [`${name}: no operation of the document matches ${response.method} ${path}`];
      return this.bodyViolations(name, 'components/schemas/Problem', response, 'application/problem+json');
    }

    const status = String(response.statusCode);
    const declared = operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
    if (!declared) {
      const statuses = Object.keys(operation.responses).join(', ');
      return [`${name}: ${operation.operationId ?? template} does not declare ${status} (it declares ${statuses})`];
    }
    const key = operation.responses[status] ? status : operation.responses[`${status[0]}XX`] ? `${status[0]}XX` : 'default';
    const responsePointer = ['paths', template, method, 'responses', key].map(escapePointer).join('/');

    const problems: string[] = [];
    for (const [header, definition] of Object.entries(declared.headers ?? {})) {
      const value = response.headers[header.toLowerCase()];
      if (value === undefined) {
        if (definition.required) problems.push(`${name}: required header ${header} is missing`);
        continue;
      }
      if (!definition.schema) continue;
      const validate = this.validator(`${responsePointer}/headers/${escapePointer(header)}/schema`);
      if (!validate(String(value))) problems.push(`${name}: header ${header}: ${this.ajv.errorsText(validate.errors)}`);
    }

    if (response.body === undefined || method !== response.method.toLowerCase()) {
      // An unread body (an event stream), or a HEAD request's (none): the media type alone.
      const mediaType = mediaTypeOf(String(response.headers['content-type'] ?? ''));
      if (!declared.content?.[mediaType]) problems.push(`${name}: media type ${mediaType || '(none)'} is not declared`);
      return problems;
    }
    if (!declared.content || Object.keys(declared.content).length === 0) {
      if (response.body !== '') problems.push(`${name}: declares no content, but a body was sent: ${response.body.slice(0, 200)}`);
      return problems;
    }
    return [...problems, ...this.bodyViolations(name, responsePointer, response)];
  }

  private bodyViolations(name: string, responsePointer: string, response: ObservedResponse, onlyMediaType?: string): string[] {
    const mediaType = mediaTypeOf(String(response.headers['content-type'] ?? ''));
    let schemaPointer = `${responsePointer}/content/${escapePointer(mediaType)}/schema`;
    if (onlyMediaType !== undefined) {
      if (mediaType !== onlyMediaType) return [`${name}: media type ${mediaType || '(none)'}, expected ${onlyMediaType}`];
      schemaPointer = responsePointer;
    } else {
      const declared = (this.resolve(responsePointer) as ResponseObject).content ?? {};
      if (!declared[mediaType])
        return [`${name}: media type ${mediaType || '(none)'} is not declared (${Object.keys(declared).join(', ')})`];
      if (!declared[mediaType].schema) return [];
    }
    let body: unknown = response.body;
    if (isJson(mediaType)) {
      try {
        body = JSON.parse(response.body ?? '');
      } catch {
        return [`${name}: the ${mediaType} body is not JSON: ${(response.body ?? '').slice(0, 200)}`];
      }
    }
    const validate = this.validator(schemaPointer);
    if (validate(body)) return [];
    return [`${name}: the body does not match the schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`];
  }

  /**
   * What in an event's `data` the document does not allow: the schema of `text/event-stream` in the 200 response of
   * GET `path` (a template, as the document writes it). Empty when it keeps the contract.
   */
  eventViolations(path: string, data: unknown): string[] {
    const pointer = `paths/${escapePointer(path)}/get/responses/200/content/${escapePointer('text/event-stream')}/schema`;
    if (this.resolve(pointer) === undefined) return [`GET ${path}: declares no text/event-stream schema`];
    const validate = this.validator(pointer);
    if (validate(data)) return [];
    return [`GET ${path} event: the data does not match the schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`];
  }

  private validator(pointer: string): ValidateFunction {
    const known = this.validators.get(pointer);
    if (known) return known;
    const validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` });
    this.validators.set(pointer, validate);
    return validate;
  }

  private resolve(pointer: string): unknown {
    let node: unknown = this.document;
    for (const segment of pointer.split('/')) {
      const key = decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
      node = (node as Record<string, unknown>)[key];
    }
    return node;
  }
}

let shared: Contract | undefined;
/** The committed document, loaded once per test file. */
export function contract(): Contract {
  shared ??= Contract.load();
  return shared;
}

/** Violations seen since the last check, with the response that broke the contract. */
const pending: string[] = [];

/**
 * Checks every response of `app` against the document (install it through buildApp's `extend`);
 * violations go to `report` (default: the afterEach check below, which fails the current test).
 */
export function checkContract(app: FastifyInstance, report: (violations: string[]) => void = (v) => pending.push(...v)): void {
  const checker = contract();
  app.addHook('onSend', async (request, reply, payload) => {
    let body: string | undefined;
    if (payload === undefined || payload === null) body = '';
    else if (typeof payload === 'string') body = payload;
    else if (Buffer.isBuffer(payload)) body = payload.toString('utf8');
    else return payload; // a stream: not buffered here
    const violations = checker.violations({
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      headers: reply.getHeaders(),
      body,
    });
    if (violations.length > 0) report(violations);
    return payload;
  });
}

/** Throws (once) when responses checked by the default report broke the contract since the last call. */
export function assertContractKept(): void {
  const violations = pending.splice(0);
  if (violations.length > 0) throw new Error(`Responses that break the OpenAPI contract (openapi/openapi.json):\n${violations.join('\n')}`);
}

// Registered on the root suite of every test file that imports this module (through
// test/support/service.ts): the test that received a broken response fails.
afterEach(assertContractKept);
