/**
 * src/api/plugins/hardening.ts: security headers with a Content-Security-Policy allowing the
 * service's own scripts and styles only, CORS off by default and on for CORS_ORIGINS, and a request
 * id in every response (also problems, hook answers and event streams) and in every log line.
 */
import { Writable } from 'node:stream';
import { chromium } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { startTestService, type TestService } from '../support/service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { worker: false, listen: true });
});

afterAll(async () => {
  await service?.close();
});

function cspDirectives(header: string | string[] | undefined): Map<string, string> {
  expect(typeof header).toBe('string');
  return new Map(
    (header as string)
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [name, ...values] = part.split(/\s+/);
        return [name, values.join(' ')] as [string, string];
      }),
  );
}

describe('security headers', () => {
  it('sends a CSP of self-hosted scripts and styles, no inline script, on API answers, problems and /docs', async () => {
    for (const url of ['/healthz', '/v1/jobs/not-an-id', '/no/such/route', '/docs', '/docs/static/swagger-ui-bundle.js']) {
      const response = await service.app.inject({ url });
      const csp = cspDirectives(response.headers['content-security-policy']);
      expect(csp.get('script-src'), url).toBe("'self'");
      // 'self', and the hash of Swagger UI's one inline <style>, nothing else ('unsafe-inline' in particular).
      expect(csp.get('style-src')?.split(' ')[0], url).toBe("'self'");
      expect(csp.get('style-src')?.split(' ').slice(1), url).toEqual([expect.stringMatching(/^'sha256-[A-Za-z0-9+/]+=*'$/)]);
      expect(csp.get('default-src'), url).toBe("'self'");
      expect(csp.get('object-src'), url).toBe("'none'");
      expect(csp.has('upgrade-insecure-requests'), url).toBe(false);
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['x-frame-options'], url).toBe('SAMEORIGIN');
      expect(response.headers['x-powered-by'], url).toBeUndefined();
    }
  });

  it('leaves Swagger UI working under that CSP: its page loads scripts and styles from files only', async () => {
    const page = await service.app.inject({ url: '/docs' });
    expect(page.statusCode).toBe(200);
    const scripts = [...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc=/);
      expect(body.trim()).toBe('');
    }
    expect(page.body).not.toMatch(/<style\b/);
    expect(page.body).not.toMatch(/\son[a-z]+=/);
  });

  it('renders Swagger UI in a browser without a single CSP violation', async () => {
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${service.baseUrl}/docs`);
      // The operations of the document, rendered by the bundle's scripts.
      await page.waitForSelector('.opblock-summary', { timeout: 30_000 });
      expect(await page.locator('.opblock-summary').count()).toBeGreaterThan(5);
      // The description is Markdown: its placeholders show as written, none is taken for an HTML tag.
      const info = await page.locator('.info').innerText();
      expect(info).toContain('Their type is a relative URI /problems/{code}');
      expect(info).toContain('code repeats its last segment');
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('request id', () => {
  it('gives every response a fresh id, and keeps a sane incoming one', async () => {
    const first = await service.app.inject({ url: '/healthz' });
    const second = await service.app.inject({ url: '/healthz' });
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);

    const kept = await service.app.inject({ url: '/healthz', headers: { 'x-request-id': 'trace-42.abc_DEF:7' } });
    expect(kept.headers['x-request-id']).toBe('trace-42.abc_DEF:7');
    for (const insane of ['two words', 'x'.repeat(129), '"quoted"', 'a\tb', '']) {
      const replaced = await service.app.inject({ url: '/healthz', headers: { 'x-request-id': insane } });
      expect(replaced.headers['x-request-id'], JSON.stringify(insane)).toMatch(UUID);
    }
  });

  it('is on problems (400, 404, 415) and on event streams', async () => {
    const id = 'req-problem-1';
    const answers = [
      await service.app.inject({ url: '/v1/jobs?limit=many', headers: { 'x-request-id': id } }),
      await service.app.inject({ url: '/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV', headers: { 'x-request-id': id } }),
      await service.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: { 'x-request-id': id, 'content-type': 'text/csv' },
        payload: 'a,b',
      }),
    ];
    expect(answers.map((response) => response.statusCode)).toEqual([400, 404, 415]);
    for (const response of answers) expect(response.headers['x-request-id']).toBe(id);

    const created = await service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { type: 'analyze', matrix: { format: 'generator', generator: 'gaussian', n: 10 }, partition: { machines: 2 } },
    });
    expect(created.statusCode).toBe(202);
    const controller = new AbortController();
    const stream = await fetch(`${service.baseUrl}/v1/jobs/${created.json<{ id: string }>().id}/events`, {
      headers: { 'x-request-id': 'req-stream-1' },
      signal: controller.signal,
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('x-request-id')).toBe('req-stream-1');
    expect(stream.headers.get('content-security-policy')).toContain("script-src 'self'");
    controller.abort();
  });

  it('is in every log line of the request', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        callback();
      },
    });
    const app = await buildApp({ config: service.config, jobService: service.jobService, logger: pino({ level: 'debug' }, sink) });
    try {
      await app.inject({ url: '/v1/jobs/not-an-id', headers: { 'x-request-id': 'req-log-1' } });
      await app.inject({ url: '/healthz' });
    } finally {
      await app.close();
    }
    const ofRequests = lines.filter((line) => 'req' in line || 'res' in line || 'reqId' in line);
    expect(ofRequests.length).toBeGreaterThanOrEqual(4); // incoming request and request completed, twice
    for (const line of ofRequests) expect(typeof line.reqId).toBe('string');
    expect(ofRequests.filter((line) => line.reqId === 'req-log-1').length).toBeGreaterThanOrEqual(2);
  });
});

describe('CORS', () => {
  it('is off by default: no Access-Control headers, whatever the Origin', async () => {
    const simple = await service.app.inject({ url: '/healthz', headers: { origin: 'https://elsewhere.example' } });
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await service.app.inject({
      method: 'OPTIONS',
      url: '/v1/jobs',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows the origins of CORS_ORIGINS only, exposing the request id', async () => {
    const allowed = 'https://dashboard.example';
    // Built without the OpenAPI contract check: CORS preflights (OPTIONS) are not operations of the document.
    const cors = {
      app: await buildApp({
        config: { ...service.config, CORS_ORIGINS: [allowed, 'http://localhost:5173'] },
        jobService: service.jobService,
      }),
    };
    try {
      const simple = await cors.app.inject({ url: '/healthz', headers: { origin: allowed } });
      expect(simple.headers['access-control-allow-origin']).toBe(allowed);
      expect(String(simple.headers['access-control-expose-headers'])).toContain('x-request-id');
      expect(simple.headers['cross-origin-resource-policy']).toBe('cross-origin');

      const preflight = await cors.app.inject({
        method: 'OPTIONS',
        url: '/v1/jobs',
        headers: { origin: allowed, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(allowed);
      expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');

      const other = await cors.app.inject({ url: '/healthz', headers: { origin: 'https://evil.example' } });
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await cors.app.close();
    }
  });
});
