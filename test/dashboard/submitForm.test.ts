/**
 * The New job form (#/new) in chromium against the real service, where a user's input can go wrong
 * before the API sees it: numbers the browser cannot read, list items that are not whole numbers, no
 * algorithm checked; where focus goes after a problem with no field of its own (a network failure, a
 * 502); a refused job retried without uploading its file again; what the form says while it waits,
 * and when the service never answers; gzip recognised by its bytes; a too-large n at the n field;
 * only the fields a generator takes shown and each shown one sent; an advise job's best partition
 * taken into a solve from its page.
 */
import { gzipSync } from 'node:zlib';
import type { Page, Request, Route } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runJob, startTestService, waitForJob } from '../support/service.js';
import { dashboardInBrowser, DESKTOP } from './browser.js';

const running = dashboardInBrowser((outDir) => startTestService({ DASHBOARD_DIR: outDir }, { listen: true }));

/** The form in a new page; its script errors (not the failed requests a test provokes), and the API requests it sent. */
async function openForm(
  path = '/#/new',
  before?: (page: Page) => Promise<void>,
): Promise<{ page: Page; errors: string[]; sent: Request[] }> {
  const page = await running.browser.newPage({ viewport: DESKTOP });
  const errors: string[] = [];
  const sent: Request[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().includes('/v1/')) sent.push(request);
  });
  await before?.(page);
  await page.goto(`${running.service.baseUrl}${path}`);
  if (path.startsWith('/#/new')) await page.getByRole('button', { name: 'Submit' }).waitFor();
  return { page, errors, sent };
}

const posts = (sent: Request[], path: string): Request[] => sent.filter((request) => new URL(request.url()).pathname === path);

/** The id of the focused element, or its tag when it has none (BODY: focus lost). */
const focused = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const active = (globalThis as unknown as { document: { activeElement: { id: string; tagName: string } | null } }).document
      .activeElement;
    return active?.id || active?.tagName || 'none';
  });

const fieldProblem = (page: Page, path: string) => page.locator(`.field[data-path="${path}"] .field-problem`);

/** A 12 x 12 tridiagonal, diagonally dominant system in Matrix Market coordinate form. */
function matrixMarket(n = 12): string {
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    lines.push(`${i} ${i} 10`);
    if (i < n) lines.push(`${i} ${i + 1} 1`, `${i + 1} ${i} 1`);
  }
  return `%%MatrixMarket matrix coordinate real general\n${n} ${n} ${lines.length}\n${lines.join('\n')}\n`;
}

/** Submit, then the new job's id once the form has opened its page. */
async function submitted(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.waitForURL(/#\/jobs\/[0-9A-Z]+$/);
  return page.url().split('/').pop()!;
}

describe('the New job form', () => {
  it('flags a number the browser cannot read (1e-, 5e) at its field, focuses the first, and sends nothing', async () => {
    const { page, errors, sent } = await openForm();
    // Typed key by key, as a user does: the browser keeps the text but its value is '' (validity.badInput).
    await page.getByLabel('n (rows and columns)').fill('');
    await page.getByLabel('n (rows and columns)').pressSequentially('3e');
    await page.getByLabel('Tolerance (relative residual)').pressSequentially('1e-');
    await page.getByLabel('Maximum iterations').pressSequentially('5e');
    await page.getByRole('button', { name: 'Submit' }).click();
    await fieldProblem(page, '/matrix/n').waitFor();
    for (const path of ['/matrix/n', '/options/tolerance', '/options/maxIterations'])
      expect(await fieldProblem(page, path).textContent(), path).toContain('not a number');
    // Its example fits the field: a whole number where only whole numbers go.
    expect(await fieldProblem(page, '/options/maxIterations').textContent()).toContain('write it as a whole number, such as 250');
    expect(await fieldProblem(page, '/options/tolerance').textContent()).toContain('write it as 250, 0.5 or 1e-8');
    for (const label of ['n (rows and columns)', 'Tolerance (relative residual)', 'Maximum iterations'])
      expect(await page.getByLabel(label).getAttribute('aria-invalid'), label).toBe('true');
    expect(await focused(page)).toBe('field-matrix-n');
    // Left out, the tolerance and the limit would have been the defaults, without a word (and n "expected number, received undefined").
    expect(posts(sent, '/v1/jobs')).toHaveLength(0);
    expect(page.url()).toMatch(/#\/new$/);

    // Corrected: the numbers as written are sent, and only then.
    await page.getByLabel('n (rows and columns)').fill('30');
    await page.getByLabel('Machines (m)').fill('3');
    await page.getByLabel('Tolerance (relative residual)').fill('1e-7');
    await page.getByLabel('Maximum iterations').fill('500');
    const id = await submitted(page);
    const job = await waitForJob(running.service.app, id);
    expect(job.options).toMatchObject({ tolerance: 1e-7, maxIterations: 500 });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('names the bad item of a block-size list or an assignment file, and asks for an algorithm, before sending', async () => {
    const { page, errors, sent } = await openForm();
    await page.getByLabel('Rows spread by').selectOption('sizes');
    await page.getByLabel('Block sizes').fill('30, abc, 40');
    for (const name of ['APC', 'D-HBM', 'DGD', 'D-NAG', 'Block Cimmino', 'Mou-Liu-Morse'])
      await page.getByRole('checkbox', { name }).uncheck();
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => fieldProblem(page, '/partition/sizes').textContent()).toContain("'abc' (item 2) is not a whole number");
    // It read "Too small: expected array to have >=1 items", and the focus fell to the page (its anchor is a hidden span).
    expect(await fieldProblem(page, '/algorithms').textContent()).toContain('Check at least one algorithm.');
    expect(await focused(page)).toBe('field-partition-sizes');
    await page.getByLabel('Block sizes').fill('30, 30, 40');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => fieldProblem(page, '/partition/sizes').isHidden()).toBe(true);
    await expect.poll(() => focused(page)).not.toBe('BODY');
    expect(
      await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { value: string } } }).document.activeElement.value),
    ).toBe('apc');

    await page.getByRole('checkbox', { name: 'APC' }).check();
    await page.getByLabel('Rows spread by').selectOption('assignment');
    await page
      .getByLabel('Assignment file')
      .setInputFiles({ name: 'rows.txt', mimeType: 'text/plain', buffer: Buffer.from('0 0 1\n1 x 2\n-1') });
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect
      .poll(() => fieldProblem(page, '/partition/assignment').textContent())
      .toContain("'x' (item 5) is not a whole number (and 1 more after it).");
    expect(posts(sent, '/v1/jobs')).toHaveLength(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('puts the focus on the problem after a network failure or a 502, and gives the button back', async () => {
    const { page, errors } = await openForm();
    let answer: (route: Route) => Promise<void> = (route) => route.abort('failed');
    await page.route('**/v1/jobs', (route) => (route.request().method() === 'POST' ? answer(route) : route.continue()));
    await page.getByRole('button', { name: 'Submit' }).click();
    const problem = page.locator('#form-problem');
    await expect.poll(() => problem.textContent()).toContain('Service unreachable');
    expect(await focused(page)).toBe('form-problem');

    answer = (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<html><body>Bad gateway</body></html>' });
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => problem.textContent()).toContain('502');
    expect(await focused(page)).toBe('form-problem');
    expect(await page.getByRole('button', { name: 'Submit' }).isEnabled()).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says it is uploading and submitting; gives up on a job POST unanswered for 120 s and can be used again', async () => {
    const { page, errors, sent } = await openForm('/#/new', (page) => page.clock.install());
    await page.getByRole('radio', { name: 'Matrix Market file' }).check();
    await page.getByLabel('File (.mtx, or .mtx.gz)').setInputFiles({
      name: 'small.mtx',
      mimeType: 'text/plain',
      buffer: Buffer.from(matrixMarket()),
    });
    await page.getByLabel('Machines (m)').fill('3');
    let releaseUpload: (() => void) | null = null;
    await page.route('**/v1/matrices', async (route) => {
      await new Promise<void>((resolve) => (releaseUpload = resolve));
      await route.continue();
    });
    const held: Route[] = [];
    await page.route('**/v1/jobs', (route) => (route.request().method() === 'POST' ? void held.push(route) : route.continue()));
    const form = page.locator('form.submit-form');
    const button = page.locator('form.submit-form button[type="submit"]');
    await button.click();
    // It read "Submit", disabled, for as long as the upload took.
    await expect.poll(() => button.textContent()).toBe('Uploading…');
    expect(await form.getAttribute('aria-busy')).toBe('true');
    expect(await button.isDisabled()).toBe(true);
    await expect.poll(() => releaseUpload !== null).toBe(true);
    releaseUpload!();
    await expect.poll(() => button.textContent()).toBe('Submitting…');
    await expect.poll(() => held.length).toBe(1);
    // No answer: still waiting just before 120 s, given up after.
    await page.clock.runFor(119_000);
    expect(await button.textContent()).toBe('Submitting…');
    await page.clock.runFor(2_000);
    const problem = page.locator('#form-problem');
    await expect.poll(() => problem.textContent()).toContain('No answer from the service within 120 s');
    expect(await focused(page)).toBe('form-problem');
    expect(await button.textContent()).toBe('Submit');
    expect(await button.isEnabled()).toBe(true);
    expect(await form.getAttribute('aria-busy')).toBeNull();
    expect(posts(sent, '/v1/matrices')).toHaveLength(1);
    for (const route of held) await route.abort().catch(() => undefined);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('uploads a gzip file named X.MTX.GZ once, retries name the stored copy, and one gone is uploaded again', async () => {
    const { page, errors, sent } = await openForm();
    await page.getByRole('radio', { name: 'Analyze only' }).check();
    await page.getByRole('radio', { name: 'Matrix Market file' }).check();
    // Upper-case: it was sent as plain text (no content-encoding), refused with a 422 full of binary.
    await page.getByLabel('File (.mtx, or .mtx.gz)').setInputFiles({
      name: 'SMALL.MTX.GZ',
      mimeType: 'application/gzip',
      buffer: gzipSync(matrixMarket()),
    });
    await page.getByLabel('Machines (m)').fill('100');
    for (let attempt = 0; attempt < 2; attempt++) {
      await page.getByRole('button', { name: 'Submit' }).click();
      await expect.poll(() => posts(sent, '/v1/jobs').length).toBe(attempt + 1);
      await expect.poll(() => fieldProblem(page, '/partition/machines').isVisible()).toBe(true);
      await page.getByRole('button', { name: 'Submit' }).waitFor();
    }
    // Two refusals (more machines than rows), one upload: both POSTs named the same stored matrix.
    expect(posts(sent, '/v1/matrices')).toHaveLength(1);
    expect(posts(sent, '/v1/matrices')[0].headers()['content-encoding']).toBe('gzip');
    const ids = posts(sent, '/v1/jobs').map((request) => (request.postDataJSON() as { matrix: { id: string } }).matrix.id);
    expect(ids[1]).toBe(ids[0]);

    // The stored matrix gone (expired, deleted): uploaded again, and the job runs.
    expect((await running.service.app.inject({ method: 'DELETE', url: `/v1/matrices/${ids[0]}` })).statusCode).toBe(204);
    await page.getByLabel('Machines (m)').fill('3');
    const id = await submitted(page);
    expect(posts(sent, '/v1/matrices')).toHaveLength(2);
    const job = await waitForJob(running.service.app, id);
    expect(job.status).toBe('succeeded');
    expect(job.matrix.id).not.toBe(ids[0]);
    expect(job.n).toBe(12);
    await page.close();

    // gzip data named .mtx: gzip all the same (read from its first two bytes).
    const other = await openForm();
    await other.page.getByRole('radio', { name: 'Analyze only' }).check();
    await other.page.getByRole('radio', { name: 'Matrix Market file' }).check();
    await other.page
      .getByLabel('File (.mtx, or .mtx.gz)')
      .setInputFiles({ name: 'small.mtx', mimeType: 'text/plain', buffer: gzipSync(matrixMarket(15)) });
    await other.page.getByLabel('Machines (m)').fill('3');
    const second = await waitForJob(running.service.app, await submitted(other.page));
    expect(second.n).toBe(15);
    expect(errors).toEqual([]);
    expect(other.errors).toEqual([]);
    await other.page.close();
  });

  it('shows n = 5000 (too large) at the n field, Seed only for generators that take one, and sends every field it shows', async () => {
    const { page, errors } = await openForm();
    await page.getByLabel('n (rows and columns)').fill('5000');
    await page.getByRole('button', { name: 'Submit' }).click();
    // It was shown under the Generator select.
    await expect.poll(() => fieldProblem(page, '/matrix/n').textContent()).toContain('n = 5000');
    expect(await fieldProblem(page, '/matrix/generator').isHidden()).toBe(true);
    expect(await focused(page)).toBe('field-matrix-n');
    await page.getByLabel('n (rows and columns)').fill('20');

    // Each generator: the number fields shown are exactly those its request carries (the job's POST answered here, nothing run).
    const bodies: Record<string, unknown>[] = [];
    await page.route('**/v1/jobs', (route) => {
      bodies.push((route.request().postDataJSON() as { matrix: Record<string, unknown> }).matrix);
      return route.fulfill({
        status: 422,
        contentType: 'application/problem+json',
        body: JSON.stringify({ title: 'Stop here', detail: 'test' }),
      });
    });
    const expected = {
      gaussian: ['mean', 'n', 'seed', 'std'],
      'block-diagonal': ['blockSize', 'n', 'permute', 'seed'],
      'structured-gaussian': ['blockSize', 'n', 'seed', 'sigma'],
      'ones-minus-eps': ['eps', 'n'],
    };
    for (const [generator, keys] of Object.entries(expected)) {
      await page.locator('select[name="generator"]').selectOption(generator);
      const names: string[] = [];
      for (const input of await page.locator('fieldset[data-source="generator"] input:visible').all()) {
        const name = (await input.getAttribute('name'))!;
        names.push(name);
        if ((await input.getAttribute('type')) === 'checkbox') await input.check();
        else await input.fill(name === 'n' ? '20' : '4');
      }
      expect(names.sort(), generator).toEqual(keys);
      await page.getByRole('button', { name: 'Submit' }).click();
      await expect.poll(() => bodies.length).toBe(Object.keys(expected).indexOf(generator) + 1);
      const sentKeys = Object.keys(bodies.at(-1)!).filter((key) => key !== 'format' && key !== 'generator');
      expect(sentKeys.sort(), generator).toEqual(keys);
    }
    // Example 3 takes no seed: shown, it was ignored. Its hint goes with it.
    expect(await page.getByLabel('Seed').isHidden()).toBe(true);
    expect(await page.getByText('Same parameters and seed: same matrix.').isHidden()).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("takes a succeeded advise job's best partition into a solve of the same matrix, from the advise job's page", async () => {
    const advice = await runJob(running.service.app, {
      type: 'advise',
      matrix: { format: 'generator', generator: 'structured-gaussian', n: 40, blockSize: 10, sigma: 0.2, seed: 5 },
      partition: { machines: 4 },
      options: { refinementTries: 0 },
    });
    expect(advice.status).toBe('succeeded');
    const { page, errors } = await openForm(`/#/jobs/${advice.id}`);
    const link = page.getByRole('link', { name: 'Solve with the best partition' });
    await link.click();
    await page.waitForURL(new RegExp(`#/new\\?fromAdvice=${advice.id}$`));
    await expect.poll(() => page.getByLabel('n (rows and columns)').inputValue()).toBe('40');
    expect(await page.getByRole('radio', { name: 'Analyze and solve' }).isChecked()).toBe(true);
    expect(await page.locator('select[name="generator"]').inputValue()).toBe('structured-gaussian');
    expect(await page.getByLabel('Sigma (off-diagonal blocks)').inputValue()).toBe('0.2');
    expect(await page.getByLabel('Rows spread by').inputValue()).toBe('fromAdvice');
    expect(await page.getByLabel('Advise job id').inputValue()).toBe(advice.id);
    await page.getByRole('checkbox', { name: 'DGD' }).uncheck();
    const id = await submitted(page);
    const job = await waitForJob(running.service.app, id);
    expect(job.status).toBe('succeeded');
    expect(job.matrix.generator).toEqual(advice.matrix.generator);
    expect(job.partition).toMatchObject({
      kind: 'fromAdvice',
      fromAdvice: advice.id,
      sizes: advice.result!.advice!.candidates.find((c) => c.strategy === advice.result!.advice!.best)!.sizes,
    });
    expect(job.algorithms).not.toContain('dgd');

    // A stored matrix is named by its id.
    const upload = await running.service.app.inject({
      method: 'POST',
      url: '/v1/matrices',
      headers: { 'content-type': 'text/plain' },
      payload: matrixMarket(),
    });
    expect(upload.statusCode).toBe(201);
    const stored = await runJob(running.service.app, {
      type: 'advise',
      matrix: { format: 'stored', id: upload.json<{ id: string }>().id },
      partition: { machines: 3 },
      options: { refinementTries: 0 },
    });
    await page.goto(`${running.service.baseUrl}/#/jobs/${stored.id}`);
    await page.getByRole('link', { name: 'Solve with the best partition' }).click();
    await expect.poll(() => page.getByLabel('Matrix id').inputValue()).toBe(upload.json<{ id: string }>().id);
    expect(await page.getByRole('radio', { name: 'Stored matrix' }).isChecked()).toBe(true);
    const solved = await waitForJob(running.service.app, await submitted(page));
    expect(solved.status).toBe('succeeded');
    expect(solved.partition?.kind).toBe('fromAdvice');
    expect(errors).toEqual([]);
    await page.close();
  });
});
