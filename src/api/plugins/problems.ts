/**
 * The one error handler: every error becomes an RFC 9457 problem (application/problem+json).
 * Typed errors of the numerical core and the job layer carry their problem type (src/jobs/problems.ts);
 * fastify's own errors (bad JSON, body too large, schema violations) and those of the JSON body
 * parser (plugins/jsonBody.ts: content codings) are mapped here; anything
 * else is a 500 whose detail reveals nothing of the cause (it is logged).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import type { Config } from '../../config.js';
import { fieldProblem, makeProblem, problemFromTypedError } from '../../jobs/problems.js';
import { NotAcceptableError } from '../contentNegotiation.js';
import { BodyTimeoutError } from '../requestBody.js';
import { RequestFieldError } from '../requestFields.js';
import type { FieldProblem, ProblemDetails } from '../../jobs/types.js';
import {
  ACCEPTED_CONTENT_CODINGS,
  DecompressedBodyTooLargeError,
  InvalidGzipBodyError,
  ForbiddenJsonKeyError,
  TooManyBodyValuesError,
  UnsupportedContentEncodingError,
} from './jsonBody.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The router's longest path parameter (its maxParamLength); a longer one is a 400 (FST_ERR_MAX_PARAM_LENGTH below). */
export const MAX_PATH_PARAMETER_LENGTH = 1000;

interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  errors?: ZodIssueLike[][];
}

const PARTS: Record<string, FieldProblem['in']> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

export function sendProblem(reply: FastifyReply, problem: ProblemDetails): FastifyReply {
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}

/**
 * The handler of every error: the app's error handler, and fastify's `frameworkErrors` (the router's own refusals, which
 * reach no error handler: a path that does not decode, a path parameter longer than the router takes).
 */
export function errorHandler(config: Config): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (error, request, reply) => {
    const problem = problemFor(error, config);
    // RFC 9110 15.5.16: a 415 for the body's coding names the codings that are accepted.
    if (error instanceof UnsupportedContentEncodingError) reply.header('accept-encoding', ACCEPTED_CONTENT_CODINGS.join(', '));
    problem.instance ??= request.url.split('?')[0];
    if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: problem.code, detail: problem.detail }, 'request rejected');
    return sendProblem(reply, problem);
  };
}

/**
 * fastify's `clientErrorHandler`: a request that is not valid HTTP/1.1 (a bad Content-Length, a bad chunk, a control
 * byte in a header, a request line that does not parse), refused by Node's parser before any route, answered with a
 * problem like every other refusal and the connection closed (what follows on it cannot be framed). As fastify's
 * default: 431 for headers over the limit, 408 for a request that timed out, else 400; nothing to answer on a reset.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers exceed the size the server takes.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request did not arrive completely in time.']
        : [400, `The request is not valid HTTP/1.1 (${error.code ?? 'unparsable'}): the connection is closed.`];
  const problem = makeProblem('invalid-request', detail);
  const body = JSON.stringify(status === problem.status ? problem : { ...problem, status, title: STATUS_CODES[status] });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** The app's error handler (`handleError`, the one fastify's `frameworkErrors` also calls), and its not-found and 405 answers. */
export function installErrorHandling(app: FastifyInstance, handleError: ReturnType<typeof errorHandler>): void {
  app.setErrorHandler(handleError);

  // Every route's path as a pattern and its methods: a path that exists for other methods is a 405 naming them.
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}/?$`);
    const known = routes.find((entry) => entry.pattern.source === pattern.source);
    if (known) known.methods.push(...methods.filter((method) => !known.methods.includes(method)));
    else routes.push({ pattern, methods });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = routes.filter((route) => route.pattern.test(path)).flatMap((route) => route.methods);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const allow = [...new Set(allowed)].sort().join(', ');
      reply.header('allow', allow);
      sendProblem(reply, makeProblem('method-not-allowed', `${path} takes ${allow}, not ${request.method}.`, { instance: path }));
      return;
    }
    sendProblem(reply, makeProblem('not-found', `No endpoint ${request.method} ${path}.`, { instance: path }));
  });
}

function problemFor(error: FastifyError, config: Config): ProblemDetails {
  if (error instanceof RequestFieldError) {
    const problem = problemFromTypedError(error.typed);
    if (problem) return { ...problem, errors: [fieldProblem(error.part, error.pointer, error.typed.message)] };
  }
  const typed = problemFromTypedError(error);
  if (typed) return typed;
  if (error instanceof UnsupportedContentEncodingError) return makeProblem('unsupported-media-type', error.message);
  if (error instanceof NotAcceptableError) return makeProblem('not-acceptable', error.message);
  if (error instanceof InvalidGzipBodyError || error instanceof ForbiddenJsonKeyError) return makeProblem('invalid-request', error.message);
  if (error instanceof DecompressedBodyTooLargeError) return makeProblem('body-too-large', error.message);
  if (error instanceof TooManyBodyValuesError) return makeProblem('body-too-large', error.message);

  if (hasZodFastifySchemaValidationErrors(error)) {
    const part = PARTS[(error as { validationContext?: string }).validationContext ?? 'body'] ?? 'body';
    const errors = (error.validation as ValidationIssue[]).flatMap((issue) => flattenIssue(issue, part));
    return makeProblem('invalid-request', describeFieldProblems(errors), { errors });
  }
  if (error instanceof BodyTimeoutError) {
    return makeProblem(
      'upload-timeout',
      `The request body did not arrive completely within ${error.timeoutMs} ms (UPLOAD_TIMEOUT_MS); nothing was stored.`,
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return makeProblem('malformed-json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return makeProblem('malformed-json', 'The request body is empty; a JSON document was expected.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return makeProblem('body-too-large', `The request body exceeds ${config.BODY_LIMIT_BYTES} bytes (BODY_LIMIT_BYTES).`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return makeProblem('unsupported-media-type', 'Unsupported Content-Type; send application/json.');
    case 'FST_ERR_BAD_URL':
      return makeProblem('invalid-request', `The request path is not valid: ${error.message} (a malformed percent-encoding).`);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return makeProblem(
        'invalid-request',
        `The request path is not valid: a path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters (an id has at most 64).`,
      );
  }
  if (isResponseSerializationError(error) && 'cause' in error) return makeProblem('internal-error', 'Internal error; it has been logged.');
  // Other client errors raised by fastify itself (their messages name the cause and hold no internals).
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return { ...makeProblem('invalid-request', error.message), status: error.statusCode, title: 'Bad request' };
  }
  return makeProblem('internal-error', 'Internal error; it has been logged.');
}

/**
 * One entry per violated field. A value matching none of a union's forms (e.g. a partition) is
 * reported through the form it resembles most: the one with fewest missing or unknown keys.
 */
function flattenIssue(issue: ValidationIssue, part: FieldProblem['in']): FieldProblem[] {
  const branches = issue.keyword === 'invalid_union' ? (issue.params?.errors as ZodIssueLike[][] | undefined) : undefined;
  if (branches && branches.length > 0) {
    const best = closestBranch(branches);
    if (best) return best.flatMap((child) => flattenZodIssue(child, issue.instancePath, part));
    return [fieldProblem(part, pointer(issue.instancePath), noFormMatches(branches))];
  }
  return [fieldProblem(part, pointer(issue.instancePath), issue.message ?? 'Invalid value')];
}

function flattenZodIssue(issue: ZodIssueLike, basePath: string, part: FieldProblem['in']): FieldProblem[] {
  const path = pointer(basePath) + issue.path.map((segment) => `/${String(segment)}`).join('');
  if (issue.code === 'invalid_union' && issue.errors && issue.errors.length > 0) {
    const best = closestBranch(issue.errors);
    if (best) return best.flatMap((child) => flattenZodIssue(child, path, part));
  }
  return [fieldProblem(part, path, issue.message)];
}

function closestBranch(branches: ZodIssueLike[][]): ZodIssueLike[] | null {
  const structural = (issue: ZodIssueLike): boolean =>
    issue.code === 'unrecognized_keys' ||
    (issue.code === 'invalid_type' && /received undefined/.test(issue.message) && issue.path.length === 1);
  let best: ZodIssueLike[] | null = null;
  let [bestStructural, bestIssues] = [Infinity, Infinity];
  for (const branch of branches) {
    // Fewest missing or unknown keys; a tie goes to the form with fewer issues (a general study missing only `metrics`
    // is not read as a preset one with no `preset` and an unknown key).
    const structuralIssues = branch.filter(structural).length;
    if (structuralIssues < bestStructural || (structuralIssues === bestStructural && branch.length < bestIssues)) {
      [bestStructural, bestIssues] = [structuralIssues, branch.length];
      best = branch;
    }
  }
  // Every form is missing a key of its own, and the closest fails on keys alone: none resembles the value, so say it
  // matches none. (A general study missing only `metrics` resembles its form: the preset form misses no key, its
  // `preset` is an enum, so it is reported through the general form.)
  const missesKey = (issue: ZodIssueLike): boolean => issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  if (best && best.every(structural) && branches.every((branch) => branch.some(missesKey))) return null;
  return best;
}

/** For unions of objects told apart by their one key (the partition forms): name the keys. */
function noFormMatches(branches: ZodIssueLike[][]): string {
  const keys = branches.map((branch) => branch.find((issue) => issue.code === 'invalid_type' && issue.path.length === 1)?.path[0]);
  if (keys.every((key) => key !== undefined))
    return `Invalid input: give exactly one of ${keys.map((key) => `"${String(key)}"`).join(', ')}`;
  return 'Invalid input: matches none of the allowed forms (see the OpenAPI document)';
}

/** An RFC 6901 pointer: the whole document is '' ('/' is its member named ''). */
function pointer(instancePath: string): string {
  return instancePath === '/' ? '' : instancePath;
}

function describeFieldProblems(errors: FieldProblem[]): string {
  const shown = errors.slice(0, 3).map((e) => `${e.in === 'body' ? '' : `${e.in} parameter `}${e.path || 'the body'}: ${e.message}`);
  const more = errors.length > 3 ? `; and ${errors.length - 3} more` : '';
  return `The request does not match the schema: ${shown.join('; ')}${more}.`;
}
