/**
 * Callbacks through HTTP with a real Redis and workers: a receiver on loopback (a
 * real node http server) gets one POST when a job or study ends, signed as Standard Webhooks specify
 * (the HMAC is computed here independently with node:crypto), its body the summary; a non-2xx answer
 * and a redirect (not followed) are retried with backoff; a private or metadata address is refused
 * at delivery time and not retried; the attempts are listed in `deliveries`; the secret never
 * appears in what the API returns.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Study, StudySummary } from '../../src/jobs/studies/types.js';
import type { Job, JobSummary } from '../../src/jobs/types.js';
import { startTestService, waitForJob, type TestService } from '../support/service.js';
import { startStudyTestService, waitForStudy, type StudyTestService } from '../support/studyService.js';
import { SMALL_ANALYZE } from '../support/requests.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver answering each path with its list of statuses in turn (the last one repeated); 204 by default. */
class Receiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, number[]>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        this.received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        const list = this.answers.get(path) ?? [204];
        const status = list.length > 1 ? list.shift()! : list[0];
        if (status >= 300 && status < 400) response.setHeader('location', `${this.url}/redirected`);
        response.statusCode = status;
        response.end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answer(path: string, statuses: number[]): void {
    this.answers.set(path, statuses);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async until(path: string, count: number, timeoutMs = 60_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.at(path).length < count) {
      if (Date.now() > deadline) throw new Error(`${path}: ${this.at(path).length} of ${count} deliveries after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.at(path);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The Standard Webhooks check, written from the spec: HMAC-SHA256 of "id.timestamp.body", base64, `v1,` prefixed. */
function verified(secret: string, delivery: Received): boolean {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = Buffer.from(
    createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${delivery.body}`).digest('base64'),
  );
  const signatures = String(delivery.headers['webhook-signature']).split(' ');
  return signatures.some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const SECRET = 'whsec-test-secret-0123456789';

async function submit(service: TestService, url: string): Promise<Job> {
  const response = await fetch(`${service.baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...SMALL_ANALYZE, notify: { url, secret: SECRET } }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(202);
  expect(text).not.toContain(SECRET);
  return JSON.parse(text) as Job;
}

/** The job once its deliveries satisfy `until`. */
async function deliveriesOf(service: TestService, id: string, until: (job: Job) => boolean): Promise<Job> {
  return waitForJob(service.app, id, { until: (job) => until(job) });
}

describe('callbacks of jobs', () => {
  let service: TestService;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    service = await startTestService({ WEBHOOK_BACKOFF_MS: 100, WEBHOOK_MAX_BACKOFF_MS: 400 }, { listen: true });
  });
  afterAll(async () => {
    await service?.close();
    await receiver.close();
  });

  it('one signed POST of the summary when the job ends, listed in deliveries; the secret is never shown', async () => {
    const created = await submit(service, `${receiver.url}/ok`);
    expect(created.notify).toEqual({ url: `${receiver.url}/ok` });
    expect(created.deliveries).toEqual([]);
    const [delivery] = await receiver.until('/ok', 1);
    expect(verified(SECRET, delivery)).toBe(true);
    expect(verified('another-secret-of-some-length', delivery)).toBe(false);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(Number(delivery.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 300);
    const summary = JSON.parse(delivery.body) as JobSummary;
    expect(summary).toMatchObject({ id: created.id, status: 'succeeded', type: 'analyze', n: 12, m: 3 });

    const job = await deliveriesOf(service, created.id, (j) => (j.deliveries ?? []).length === 1);
    expect(job.deliveries![0]).toMatchObject({ attempt: 1, statusCode: 204, error: null, nextRetryAt: null });
    const listed = await fetch(`${service.baseUrl}/v1/jobs/${created.id}`).then((r) => r.text());
    expect(listed).not.toContain(SECRET);
    // One delivery only.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/ok')).toHaveLength(1);
  });

  it('retries after a non-2xx answer and after a redirect (not followed), with backoff, the same webhook-id each time', async () => {
    receiver.answer('/flaky', [500, 302, 200]);
    const created = await submit(service, `${receiver.url}/flaky`);
    const deliveries = await receiver.until('/flaky', 3);
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(deliveries.every((d) => verified(SECRET, d))).toBe(true);
    expect(receiver.at('/redirected')).toHaveLength(0);

    const job = await deliveriesOf(service, created.id, (j) => (j.deliveries ?? []).length === 3);
    const [first, second, third] = job.deliveries!;
    expect(first).toMatchObject({ attempt: 1, statusCode: 500 });
    expect(first.error).toContain('500');
    expect(second).toMatchObject({ attempt: 2, statusCode: 302 });
    expect(second.error).toContain('redirect');
    expect(third).toMatchObject({ attempt: 3, statusCode: 200, error: null, nextRetryAt: null });
    // Each retry came no sooner than the backoff said (100 ms, then 200 ms).
    expect(Date.parse(first.nextRetryAt!) - Date.parse(first.at)).toBe(100);
    expect(Date.parse(second.nextRetryAt!) - Date.parse(second.at)).toBe(200);
    expect(Date.parse(second.at)).toBeGreaterThanOrEqual(Date.parse(first.nextRetryAt!) - 5);
  });

  it.each([
    ['the metadata address', 'http://169.254.169.254/latest/meta-data', 'metadata'],
    ['a private address', 'http://10.1.2.3:8080/hook', 'private'],
    ['a link-local IPv6 address', 'http://[fe80::1]/hook', 'link-local'],
  ])('refuses %s at delivery time, and does not retry', async (_name, url, kind) => {
    const created = await submit(service, url);
    const job = await deliveriesOf(service, created.id, (j) => (j.deliveries ?? []).length >= 1);
    expect(job.status).toBe('succeeded');
    const [delivery] = job.deliveries!;
    expect(delivery).toMatchObject({ attempt: 1, statusCode: null, nextRetryAt: null });
    expect(delivery.error).toContain(`a ${kind} address`);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await waitForJob(service.app, created.id)).deliveries).toHaveLength(1);
  });

  it('refuses a notify URL that is not http(s), holds credentials or no host, or a short secret, at submission (400)', async () => {
    for (const [notify, pointer, says] of [
      [{ url: 'ftp://127.0.0.1/x', secret: SECRET }, '/notify/url', 'must be an http or https URL'],
      // The job would show the password to whoever reads it.
      [{ url: 'http://user:pass@127.0.0.1:9/x', secret: SECRET }, '/notify/url', 'must not hold credentials'],
      // Read with `path` as its host, and retried for a day.
      [{ url: 'http:///path', secret: SECRET }, '/notify/url', 'must name its host'],
      // One message, not also the host check's.
      [{ url: 'http:/127.0.0.1:9/x', secret: SECRET }, '/notify/url', 'must be an http or https URL'],
      [{ url: `${receiver.url}/ok`, secret: 'short' }, '/notify/secret', ''],
    ] as const) {
      const response = await fetch(`${service.baseUrl}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...SMALL_ANALYZE, notify }),
      });
      const problem = (await response.json()) as { errors: { pointer: string; detail: string }[] };
      expect(response.status, JSON.stringify(problem)).toBe(400);
      expect(problem.errors.map((e) => e.pointer)).toEqual([pointer]);
      expect(problem.errors[0].detail).toContain(says);
      expect(JSON.stringify(problem)).not.toContain('pass@');
    }
  });

  it("signs with the key a Standard Webhooks secret (whsec_<base64>) encodes: their library's verify accepts it", async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const response = await fetch(`${service.baseUrl}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...SMALL_ANALYZE, notify: { url: `${receiver.url}/standard`, secret } }),
    });
    expect(response.status).toBe(202);
    const [delivery] = await receiver.until('/standard', 1);
    const headers = Object.fromEntries(
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(delivery.headers[h])]),
    );
    // The standardwebhooks package, as a receiver following the spec would verify it; a wrong key is refused.
    expect(new Webhook(secret).verify(delivery.body, headers)).toMatchObject({ status: 'succeeded' });
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(delivery.body, headers)).toThrow();
    // A secret of any other form keys the HMAC with its UTF-8 bytes, as before (the other tests' SECRET).
    expect(verified(secret, delivery)).toBe(false);
  });
});

describe('only the hosts WEBHOOK_ALLOWED_HOSTS allows', () => {
  let service: TestService;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    // Public addresses only, as on a non-loopback HOST: the loopback receiver is refused.
    service = await startTestService({ WEBHOOK_ALLOWED_HOSTS: ['*'] }, { listen: true });
  });
  afterAll(async () => {
    await service?.close();
    await receiver.close();
  });

  it('refuses a loopback receiver unless `loopback` is listed', async () => {
    const created = await submit(service, `${receiver.url}/ok`);
    const job = await deliveriesOf(service, created.id, (j) => (j.deliveries ?? []).length >= 1);
    expect(job.deliveries![0].error).toContain('a loopback address');
    expect(receiver.received).toHaveLength(0);
  });
});

describe('callbacks of studies', () => {
  let service: StudyTestService;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    service = await startStudyTestService();
    service.spawnWorker();
  });
  afterAll(async () => {
    await service?.close();
    await receiver.close();
  });

  it('one signed POST of the study summary when it ends; the secret never in the study', async () => {
    const response = await fetch(`${service.baseUrl}/v1/studies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        preset: 'experiment-1',
        samples: 4,
        grid: { mean: [0], m: [2] },
        notify: { url: `${receiver.url}/study`, secret: SECRET },
      }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(202);
    expect(text).not.toContain(SECRET);
    const created = JSON.parse(text) as Study;
    expect(created.notify).toEqual({ url: `${receiver.url}/study` });
    expect(created.request).not.toHaveProperty('notify');

    const [delivery] = await receiver.until('/study', 1, 120_000);
    expect(verified(SECRET, delivery)).toBe(true);
    expect(JSON.parse(delivery.body) as StudySummary).toMatchObject({ id: created.id, status: 'succeeded' });
    const study = await waitForStudy(service.app, created.id, { until: (s) => (s.deliveries ?? []).length === 1 });
    expect(study.deliveries![0]).toMatchObject({ attempt: 1, statusCode: 204, error: null });
    expect(JSON.stringify(study)).not.toContain(SECRET);
  });
});
