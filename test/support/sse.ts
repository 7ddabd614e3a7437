/** A minimal Server-Sent Events client over fetch, for the tests. */
export interface SseEvent {
  event: string;
  data: unknown;
}

export interface EventStream {
  status: number;
  contentType: string | null;
  events: SseEvent[];
  /** Comment lines received (heartbeats). */
  comments: string[];
  /** Resolves with the first event (already received or future) matching `predicate`. */
  waitFor(predicate: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** `headers`: e.g. an API key's `authorization`. */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const notify = (): void => waiters.forEach((wake) => wake());

  const ended = (async () => {
    if (!response.body) return;
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trim());
          }
          if (data.length > 0) {
            events.push({ event, data: JSON.parse(data.join('\n')) });
            notify();
          }
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      notify();
    }
  })();
  let isEnded = false;
  void ended.finally(() => {
    isEnded = true;
    notify();
  });

  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    events,
    comments,
    ended,
    close: () => controller.abort(),
    waitFor(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = events.find(predicate);
          if (found) {
            finish();
            resolve(found);
            return true;
          }
          if (isEnded) {
            finish();
            reject(new Error(`event stream ended without the expected event; got ${events.map((e) => e.event).join(', ')}`));
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(', ')}`));
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        const wake = (): void => void check();
        if (!check()) waiters.add(wake);
      });
    },
  };
}
