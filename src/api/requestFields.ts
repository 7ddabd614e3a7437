/**
 * Where in the request body a semantic refusal (422, 413) points. The numerical core's typed errors
 * know what is wrong (row 3, machine 1, "options.parameters.apc.zeta", "matrix entry (1, 2)") but not
 * where the request said it: the HTTP layer validates a body stage by stage (matrix, partition, rhs,
 * options; a study's definition) and wraps an error of a stage in RequestFieldError with a JSON
 * pointer (RFC 6901) into the body, refined from the error's details. The error handler answers it
 * as the core's problem with `errors: [{ pointer, detail }]`, as schema violations carry.
 */
import { JobError } from '../jobs/errors.js';
import { SolverError } from '../solvers/errors.js';
import type { FieldProblem } from '../jobs/types.js';

/** A typed error of the core or the job layer, and the field of the request (its body unless `part` says) it concerns. */
export class RequestFieldError extends Error {
  constructor(
    readonly typed: SolverError | JobError,
    readonly pointer: string,
    readonly part: FieldProblem['in'] = 'body',
  ) {
    super(typed.message);
    this.name = 'RequestFieldError';
  }
}

type Pointer = (error: SolverError | JobError) => string;

/** Runs `work`; a typed error it throws is rethrown as RequestFieldError at `pointer`. */
export function atField<T>(pointer: string | Pointer, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw located(error, pointer);
  }
}

/** atField for asynchronous work. */
export async function atFieldAsync<T>(pointer: string | Pointer, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw located(error, pointer);
  }
}

/** The error at its field; as it is when it is not a typed error or concerns no one field (pointer ''). */
function located(error: unknown, pointer: string | Pointer): unknown {
  if (!(error instanceof SolverError || error instanceof JobError)) return error;
  const at = typeof pointer === 'string' ? pointer : pointer(error);
  return at === '' ? error : new RequestFieldError(error, at);
}

/** "a.b.c" -> "/a/b/c" (RFC 6901: '~' and '/' in a segment escaped). */
export function pointerOfPath(path: string): string {
  return path
    .split('.')
    .map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

const ENTRY = /^matrix entry \((\d+), (\d+)\)$/;
const VECTOR_ENTRY = /^(\w+)\[(\d+)\]$/;

const numberAt = (details: Record<string, unknown>, key: string): number | undefined =>
  typeof details[key] === 'number' ? details[key] : undefined;

/** The matrix input's field an error of reading it concerns. */
export function matrixPointer(format: string): Pointer {
  return (error) => {
    const details = error instanceof SolverError ? error.details : {};
    const where = typeof details.where === 'string' ? ENTRY.exec(details.where) : null;
    const parameter = typeof details.parameter === 'string' ? details.parameter : undefined;
    if (format === 'dense') {
      if (where) return `/matrix/data/${where[1]}/${where[2]}`;
      const row = numberAt(details, 'row');
      if (row !== undefined) return `/matrix/data/${row}`;
      return '/matrix/data';
    }
    if (format === 'coo') {
      const entry = numberAt(details, 'entry');
      if (entry !== undefined) {
        const index = 'row' in details ? '/0' : 'column' in details ? '/1' : '';
        return `/matrix/entries/${entry}${index}`;
      }
      if (parameter === 'rows' || parameter === 'cols') return `/matrix/${parameter}`;
      return '/matrix/entries';
    }
    if (format === 'stored') return '/matrix/id';
    if (format === 'generator') return parameter ? `/matrix/${parameter}` : '/matrix';
    // Matrix Market text (the line, in `details`, says where inside it).
    return '/matrix/data';
  };
}

/**
 * The partition's field: the form given (machines, sizes, assignment, groups, fromJob, fromAdvice), and the
 * machine or row when known; a random one's seed or machines.
 */
export function partitionPointer(partition: object): Pointer {
  if ('family' in partition) {
    return (error) => {
      const details = error instanceof SolverError ? error.details : {};
      if (details.parameter === 'seed' || details.parameter === 'family') return `/partition/${details.parameter}`;
      return error.code === 'too-many-machines' || 'machines' in details ? '/partition/machines' : '/partition';
    };
  }
  const form = ['machines', 'sizes', 'assignment', 'groups', 'fromJob', 'fromAdvice'].find((key) => key in partition) ?? '';
  const base = form ? `/partition/${form}` : '/partition';
  return (error) => {
    const details = error instanceof SolverError ? error.details : {};
    const machines = Array.isArray(details.machines) ? (details.machines as number[]) : undefined;
    const machine = numberAt(details, 'machine') ?? machines?.[1];
    const row = numberAt(details, 'row');
    if ((form === 'sizes' || form === 'groups') && machine !== undefined && error.code !== 'too-many-machines') return `${base}/${machine}`;
    if (form === 'assignment' && row !== undefined && error.code !== 'row-unassigned') return `${base}/${row}`;
    return base;
  };
}

/** A vector input (rhs): the entry named by the error ("rhs[3]"), else the whole field. */
export function vectorPointer(field: string): Pointer {
  return (error) => {
    const where = error instanceof SolverError && typeof error.details.where === 'string' ? VECTOR_ENTRY.exec(error.details.where) : null;
    return where && where[1] === field ? `/${field}/${where[2]}` : `/${field}`;
  };
}

/** Options: the parameter the error names ("options.parameters.apc.zeta"), else /options. */
export const optionsPointer: Pointer = (error) => {
  const parameter = error instanceof SolverError ? error.details.parameter : undefined;
  return typeof parameter === 'string' && parameter.startsWith('options.') ? pointerOfPath(parameter) : '/options';
};

/**
 * A study definition: "grid.m" -> /grid/m; a setting given as a grid axis or a fixed setting where
 * it was given; a metric by its index in `metrics`.
 */
export function studyPointer(body: object & { grid?: object; settings?: object; metrics?: readonly string[] }): Pointer {
  return (error) => {
    if (error.code === 'matrix-not-found' && 'matrix' in body) return '/matrix/id';
    const details = error instanceof SolverError ? error.details : {};
    const parameter = typeof details.parameter === 'string' ? details.parameter : undefined;
    if (parameter === undefined) return '';
    if (parameter === 'metrics' && typeof details.metric === 'string') {
      const index = body.metrics?.indexOf(details.metric) ?? -1;
      return index >= 0 ? `/metrics/${index}` : '/metrics';
    }
    if (parameter.includes('.')) return pointerOfPath(parameter);
    if (body.grid && parameter in body.grid) return `/grid/${parameter}`;
    if (body.settings && parameter in body.settings) return `/settings/${parameter}`;
    return `/${parameter}`;
  };
}
