/**
 * The Server-Sent Events response of the job and study event routes: first the events delivered
 * while subscribing (the current status), then each event as it comes, until the last one (a
 * finished status); heartbeat comment lines keep proxies from timing an idle stream out.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';

export interface StreamedEvent {
  event: string;
  data: unknown;
}

export interface EventStreamOptions<E extends StreamedEvent> {
  /** Subscribe to the resource's events; throws (a 404 error) before anything is sent. Resolves to the unsubscribe function. */
  subscribe: (deliver: (event: E) => void) => Promise<() => void>;
  /** Whether the stream closes after this event (the status of a finished resource). */
  isLast: (event: E) => boolean;
  /** The comment that opens the stream, e.g. "stream of job events". */
  banner: string;
  /** An event's `data` line (default: JSON of event.data). */
  dataOf?: (event: E) => string;
  heartbeatMs: number;
}

/** The part of a fastify reply a stream takes over. */
interface HijackableReply {
  readonly raw: ServerResponse;
  hijack(): unknown;
}

/** The streams open on an app's routes: ended before the server closes, since they would keep app.close() waiting forever. */
export function trackOpenStreams(app: FastifyInstance): Set<() => void> {
  const open = new Set<() => void>();
  app.addHook('preClose', (hookDone) => {
    for (const end of open) end();
    hookDone();
  });
  return open;
}

export async function streamEvents<E extends StreamedEvent>(
  reply: HijackableReply,
  openStreams: Set<() => void>,
  { subscribe, isLast, banner, heartbeatMs, dataOf = (event) => JSON.stringify(event.data) }: EventStreamOptions<E>,
): Promise<void> {
  const raw = reply.raw;
  // The one buffer of early events: the first status event comes while subscribe() runs, before the
  // stream can open (an unknown id must still get a 404 problem).
  const early: E[] = [];
  let streaming = false;
  let ended = false;
  let heartbeat: NodeJS.Timeout | undefined = undefined;
  let unsubscribe: (() => void) | undefined = undefined;

  /** Ends the stream, after `last` when given (one write for both). */
  const end = (last?: string): void => {
    if (ended) return;
    ended = true;
    openStreams.delete(end);
    clearInterval(heartbeat);
    unsubscribe?.();
    if (!raw.writableEnded) raw.end(last);
  };
  const write = (event: E): void => {
    if (ended) return;
    const text = `event: ${event.event}\ndata: ${dataOf(event)}\n\n`;
    if (isLast(event)) end(text);
    else raw.write(text);
  };

  unsubscribe = await subscribe((event) => (streaming ? write(event) : early.push(event)));

  reply.hijack();
  // HEAD (fastify answers it with the GET route): the head alone, at once. A stream would never send it (a HEAD response
  // has no body to flush it with) and hold the socket until the client gave up.
  if (raw.req.method === 'HEAD') {
    unsubscribe();
    raw.writeHead(200, { 'content-type': EVENT_STREAM_TYPE, 'cache-control': 'no-cache, no-transform' });
    raw.end();
    return;
  }
  raw.writeHead(200, {
    'content-type': EVENT_STREAM_TYPE,
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // The head, the banner and the early events go out in one write.
  raw.cork();
  raw.write(`: ${banner}\nretry: 2000\n\n`);
  streaming = true;
  openStreams.add(end);
  raw.on('close', () => end());
  heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), heartbeatMs);
  for (const event of early.splice(0)) write(event);
  raw.uncork();
}
