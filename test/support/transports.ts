/**
 * One request, two ways to send it: through fastify's `inject` (no socket) and over a real socket
 * (`fetch` to the listening server), so that a list of cases runs through both. Streams, aborts and
 * timing differ over a socket: an upload's refusal raced its stream's abort there, never through inject.
 * Also raw-socket senders for what fetch cannot do: a body cut off midway, a body sent slowly, a
 * chunked body that never ends, a client that leaves while its upload is parsed.
 */
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface Request {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json<T>(): T;
}

export interface Transport {
  readonly name: 'inject' | 'socket';
  send(request: Request): Promise<Answer>;
}

function answer(status: number, headers: Record<string, string>, text: string): Answer {
  return { status, headers, text, json: <T>() => JSON.parse(text) as T };
}

export function injectTransport(app: FastifyInstance): Transport {
  return {
    name: 'inject',
    async send({ method, url, headers, body }) {
      const response = await app.inject({ method: method as 'GET', url, headers, payload: body });
      const flat = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, String(v)]));
      return answer(response.statusCode, flat, response.body);
    },
  };
}

/** `baseUrl`: http://127.0.0.1:port of the listening app. */
export function socketTransport(baseUrl: string): Transport {
  return {
    name: 'socket',
    async send({ method, url, headers, body }) {
      const response = await fetch(`${baseUrl}${url}`, { method, headers, body });
      const flat: Record<string, string> = {};
      response.headers.forEach((value, key) => (flat[key] = value));
      return answer(response.status, flat, await response.text());
    },
  };
}

/** Both transports of a service that listens. */
export function bothTransports(app: FastifyInstance, baseUrl: string): Transport[] {
  if (!baseUrl) throw new Error('the service must listen (startTestService(..., { listen: true }))');
  return [injectTransport(app), socketTransport(baseUrl)];
}

/** The first response on a raw socket, parsed (status, headers, body by content-length); null when the connection closed without one. */
function readAnswer(socket: Socket): Promise<Answer | null> {
  return new Promise((resolve) => {
    let data = Buffer.alloc(0);
    const settle = (): void => {
      const text = data.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? NaN);
      const body = data.subarray(Buffer.byteLength(text.slice(0, end + 4)));
      if (Number.isFinite(length) && body.length < length) return;
      socket.removeListener('data', onData);
      resolve(answer(Number(statusLine.split(' ')[1]), headers, body.subarray(0, length).toString('utf8')));
    };
    const onData = (chunk: Buffer): void => {
      data = Buffer.concat([data, chunk]);
      settle();
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(null));
    socket.once('error', () => undefined);
  });
}

export interface RawUpload {
  /** The answer, or null when the server closed the connection without one. */
  answer: Promise<Answer | null>;
  socket: Socket;
  /**
   * Resolves once the server's end of this connection has closed (given `server`): the server has
   * seen the client go. Other connections (a fetch's idle keep-alive ones) do not count.
   */
  serverClosed: Promise<void>;
}

/** The server's end of the connection whose client end is `client` (matched by port, once connected). */
function serverEndClosed(server: Server, client: Socket): Promise<void> {
  return new Promise((resolve) => {
    const onConnection = (end: Socket): void => {
      const match = (): void => {
        if (end.remotePort !== client.localPort) return;
        server.removeListener('connection', onConnection);
        if (end.destroyed) resolve();
        else end.once('close', () => resolve());
      };
      if (client.localPort === undefined) client.once('connect', match);
      else match();
    };
    server.on('connection', onConnection);
  });
}

/**
 * Sends the head of a request (with a Content-Length of `declaredLength`) and then `body` in
 * `pieces` chunks, `delayMs` apart; `end` says what follows the last piece: nothing (the connection
 * stays open: a body cut off), or 'destroy' (the client leaves).
 */
export function rawRequest(
  baseUrl: string,
  request: Required<Pick<Request, 'method' | 'url'>> & { headers: Record<string, string>; body: Buffer; declaredLength?: number },
  options: { pieces?: number; delayMs?: number; end?: 'wait' | 'destroy'; destroyAfterMs?: number; server?: Server } = {},
): RawUpload {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const serverClosed = options.server ? serverEndClosed(options.server, socket) : Promise.resolve();
  socket.on('error', () => undefined);
  const answerPromise = readAnswer(socket);
  const length = request.declaredLength ?? request.body.length;
  const head = [
    `${request.method} ${request.url} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    `content-length: ${length}`,
    'connection: close',
    ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  void (async () => {
    socket.write(head);
    const pieces = Math.max(1, options.pieces ?? 1);
    const size = Math.ceil(request.body.length / pieces);
    for (let offset = 0; offset < request.body.length && !socket.destroyed; offset += size) {
      socket.write(request.body.subarray(offset, offset + size));
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    }
    if (options.end === 'destroy') {
      await new Promise((resolve) => setTimeout(resolve, options.destroyAfterMs ?? 0));
      socket.destroy();
    }
  })();
  return { answer: answerPromise, socket, serverClosed };
}

/**
 * A POST /v1/matrices over a raw socket with a chunked body that `feed` writes (see `httpChunk`), for
 * bodies that never end; resolves with everything the server sent once it closed the connection.
 */
export function chunkedUpload(baseUrl: string, feed: (socket: Socket) => void): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    socket.on('data', (data: Buffer) => (received += data.toString()));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // Writing on after the server closed: what it sent before is what counts.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') resolve(received);
      else reject(error);
    });
    socket.on('close', () => resolve(received));
    socket.on('connect', () => {
      socket.write(
        'POST /v1/matrices HTTP/1.1\r\nHost: test\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n',
      );
      feed(socket);
    });
  });
}

/** `text` as one chunk of a chunked HTTP/1.1 body. */
export function httpChunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

/** `bytes` written as they are on a new connection (a request that may not be valid HTTP); the answer, or null. */
export function rawBytes(baseUrl: string, bytes: string): Promise<Answer | null> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  const answer = readAnswer(socket);
  socket.write(bytes);
  return answer.finally(() => socket.destroy());
}
