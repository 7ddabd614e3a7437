/**
 * The dashboard's one way to the service: the public HTTP API under /v1, with the user's API key
 * (if any) as `Authorization: Bearer`. Refused requests become ProblemErrors carrying the RFC 9457
 * problem the API sent. Event streams are read with fetch rather than EventSource, which cannot
 * send an Authorization header.
 */
import type { Problem } from './apiTypes.js';

const KEY_STORAGE = 'lss.dashboard.apiKey';

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
    this.name = 'ProblemError';
  }
}

/** What the API answered when it did not answer a problem (a proxy's page, a network failure). */
function problemOf(status: number, title: string, detail: string): Problem {
  return { type: 'about:blank', status, title, detail };
}

export interface StreamHandlers {
  onEvent(event: string, data: unknown): void;
  /** The stream ended (the server closed it, or it failed and will not be retried). */
  onEnd?(error?: unknown): void;
}

export class ApiClient {
  /** Called when the API answers 401 (no key, or a key it does not accept). */
  onUnauthorized: (problem: Problem) => void = () => undefined;

  get apiKey(): string | null {
    return sessionStorage.getItem(KEY_STORAGE);
  }

  set apiKey(key: string | null) {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  }

  headers(extra: Record<string, string> = {}): Headers {
    const headers = new Headers(extra);
    const key = this.apiKey;
    if (key) headers.set('authorization', `Bearer ${key}`);
    return headers;
  }

  /** `signal`: abandon the request (it then rejects with the signal's reason, not as unreachable). */
  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const response = await this.send(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      {
        accept: 'application/json, application/problem+json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      signal,
    );
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** A body as is (a Matrix Market upload), answered with JSON. */
  async upload<T>(path: string, body: Blob | string, headers: Record<string, string>): Promise<T> {
    const response = await this.send('POST', path, body, { accept: 'application/json, application/problem+json', ...headers });
    return (await response.json()) as T;
  }

  async send(
    method: string,
    path: string,
    body: BodyInit | undefined,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(path, { method, body, headers: this.headers(headers), signal });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new ProblemError(problemOf(0, 'Service unreachable', `The request did not reach the service (${String(error)}).`));
    }
    if (response.ok) return response;
    const problem = await readProblem(response);
    if (response.status === 401) this.onUnauthorized(problem);
    throw new ProblemError(problem);
  }

  /**
   * Read a Server-Sent Events stream until the server ends it or `signal` aborts; a dropped
   * connection is opened again after the `retry` the server asked for (the API repeats the current
   * status first, so nothing is missed).
   */
  stream(path: string, handlers: StreamHandlers, signal: AbortSignal, { reconnect = false }: { reconnect?: boolean } = {}): void {
    void this.readStream(path, handlers, signal, reconnect);
  }

  /** `reconnect`: a stream the server ends is opened again too (the list-wide stream never ends by itself; the server is restarting). */
  private async readStream(path: string, handlers: StreamHandlers, signal: AbortSignal, reconnect: boolean): Promise<void> {
    let retryMs = 2000;
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        const response = await fetch(path, { headers: this.headers({ accept: 'text/event-stream' }), signal });
        if (!response.ok || !response.body) {
          const problem = await readProblem(response);
          if (response.status === 401) this.onUnauthorized(problem);
          handlers.onEnd?.(new ProblemError(problem));
          return;
        }
        attempt = 0;
        const parser = new EventStreamParser((event, data) => handlers.onEvent(event, data));
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(value);
          retryMs = parser.retryMs ?? retryMs;
        }
        if (!reconnect) {
          handlers.onEnd?.();
          return;
        }
      } catch (error) {
        if (signal.aborted) return;
        if (attempt >= 5) {
          handlers.onEnd?.(error);
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}

async function readProblem(response: Response): Promise<Problem> {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    try {
      const body = (await response.json()) as Partial<Problem>;
      if (typeof body.title === 'string') return { type: 'about:blank', status: response.status, detail: '', ...body } as Problem;
    } catch {
      // Not JSON after all: described below.
    }
  }
  return problemOf(response.status, response.statusText || `HTTP ${response.status}`, `The service answered ${response.status}.`);
}

/** The text/event-stream format: `event:` and `data:` lines, events separated by a blank line, `:` comments. */
export class EventStreamParser {
  private buffer = '';
  retryMs: number | null = null;

  constructor(private readonly dispatch: (event: string, data: unknown) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      this.dispatchBlock(block);
    }
  }

  private dispatchBlock(block: string): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    if (data.length === 0) return;
    const text = data.join('\n');
    try {
      this.dispatch(event, JSON.parse(text));
    } catch {
      this.dispatch(event, text);
    }
  }
}
