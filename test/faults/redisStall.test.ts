/**
 * Fault: Redis stalled (SIGSTOP) past the API's 15 s command timeout while a job is submitted, then resumed. The
 * client gets 503 `store-unavailable`; what the timed-out commands still do once Redis answers again is undone by the
 * commands queued behind them: no job appears that the client was told does not exist (it stayed `queued` forever, with
 * no queue entry), and the request's Idempotency-Key is free at once (every retry waited 30 s and got 409 for minutes).
 * Found by a reliability QA pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, JobPage, ProblemDetails } from '../../src/jobs/types.js';
import { GOOD_JOB } from '../support/requests.js';
import { startTestService, waitForJob, type TestService } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
});

afterAll(async () => {
  try {
    process.kill(service.redis.pid, 'SIGCONT');
  } catch {
    // Gone already.
  }
  await service?.close();
});

const body = (label: string): object => ({ ...GOOD_JOB, labels: { stall: label } });

function post(payload: object, key?: string): Promise<Response> {
  return fetch(`${service.baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(payload),
  });
}

/** `payload` posted while Redis is stopped: the answer (a 503), Redis resumed after it. */
async function postDuringStall(payload: object, key?: string): Promise<Response> {
  process.kill(service.redis.pid, 'SIGSTOP');
  try {
    return await post(payload, key);
  } finally {
    process.kill(service.redis.pid, 'SIGCONT');
  }
}

describe('a job submitted while Redis is stalled', () => {
  it('answers 503, and no job appears once Redis answers again', async () => {
    const answer = await postDuringStall(body('ghost'));
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as ProblemDetails).code).toBe('store-unavailable');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const listed = (await (await fetch(`${service.baseUrl}/v1/jobs?label=stall:ghost`)).json()) as JobPage;
    expect(listed.items).toEqual([]);
  }, 60_000);

  it('answers 503, and its Idempotency-Key is free at once: the retry creates the job', async () => {
    const answer = await postDuringStall(body('keyed'), 'stall-key');
    expect(answer.status).toBe(503);
    const started = Date.now();
    const retry = await post(body('keyed'), 'stall-key');
    expect(retry.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(10_000);
    const job = (await retry.json()) as Job;
    expect((await waitForJob(service.app, job.id)).status).toBe('succeeded');
  }, 60_000);
});

describe('a Prometheus scrape while Redis is stalled', () => {
  it("answers 200 within Prometheus' default scrape timeout (10 s), lss_redis_up 0 and no queue depth", async () => {
    process.kill(service.redis.pid, 'SIGSTOP');
    let text: string;
    let status: number;
    const started = Date.now();
    try {
      const answer = await fetch(`${service.baseUrl}/metrics`);
      [status, text] = [answer.status, await answer.text()];
    } finally {
      process.kill(service.redis.pid, 'SIGCONT');
    }
    // It waited the command timeout (15 s) before: the scrape failed, which is what lss_redis_up is there to avoid.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(status).toBe(200);
    expect(text).toMatch(/^lss_redis_up 0$/m);
    expect(text).not.toMatch(/^lss_queue_jobs\{/m);
    // Redis answering again, so does the next scrape.
    const after = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(after).toMatch(/^lss_redis_up 1$/m);
  }, 60_000);
});
