/**
 * `#/new`: a job from a form (analyze, solve, or advise a partition with its imbalance and refinement
 * tries). The matrix is a generator (Gaussian or the paper's Examples 1-3) with
 * its parameters, pasted Matrix Market text, or a Matrix Market file; files (and pasted text over
 * INLINE_LIMIT) are uploaded once through POST /v1/matrices and named by id, so a large matrix never
 * travels inside a JSON body (and a retry after a refusal names the same stored matrix instead of
 * uploading it again). Before sending, the form checks only what it would otherwise send wrong: a
 * number field the browser cannot read (its value is then '', which would silently leave the option
 * out), a required one left empty, the items of a block-size list or an assignment file, no
 * algorithm checked. Everything else is the API's to judge; a refused request's problem is shown
 * next to the field it names. `#/new?fromAdvice={id}` opens the form to solve an advise job's
 * matrix on its best partition.
 */
import { ProblemError, type ApiClient } from './apiClient.js';
import {
  ALGORITHM_NAMES,
  ALGORITHMS,
  type AlgorithmId,
  type CreateJobRequest,
  type Job,
  type Problem,
  type StoredMatrix,
} from './apiTypes.js';
import { announce, clear, h } from './dom.js';
import type { View } from './view.js';

/** Pasted text longer than this goes through POST /v1/matrices rather than inside the job's JSON. */
const INLINE_LIMIT = 1 << 20;
/**
 * How long the job's POST may go unanswered before the form gives up on it and can be used again.
 * Uploads have no such limit: a large file over a slow link takes what it takes, and says so.
 */
export const SUBMIT_TIMEOUT_MS = 120_000;

const GENERATORS = {
  gaussian: 'Gaussian (mean, std)',
  'block-diagonal': 'Example 1: block diagonal (totally orthogonal)',
  'structured-gaussian': 'Example 2: structured Gaussian (blocks, sigma)',
  'ones-minus-eps': 'Example 3: ones minus eps',
} as const;
type GeneratorName = keyof typeof GENERATORS;
/** The API's lists with a minimum length (the form refuses an empty one before sending). */
type NonEmpty<T> = [T, ...T[]];
type FieldError = NonNullable<Problem['errors']>[number];
type MatrixEcho = Job['matrix'];

/** Whether the form can hold a job's matrix (a generator it offers, or a stored matrix): the advise page links to the form then. */
export function formHoldsMatrix(matrix: MatrixEcho): boolean {
  if (matrix.format === 'stored') return !!matrix.id;
  return matrix.format === 'generator' && !!matrix.generator && matrix.generator.generator in GENERATORS;
}

/** The matrix as the form will send it, before any upload: a file or long text is uploaded only once the rest is found sound. */
type MatrixPlan = { request: CreateJobRequest['matrix'] } | { upload: Blob | string; gzip: boolean };

/** Which field a problem without field-level `errors` is about, by its code. */
const FIELD_OF_CODE: Record<string, string> = {
  'invalid-partition': '/partition',
  'empty-machine': '/partition',
  'row-assigned-twice': '/partition',
  'row-unassigned': '/partition',
  'too-many-machines': '/partition',
  'dimension-mismatch': '/partition',
  'not-square': '/matrix',
  'matrix-market-syntax': '/matrix',
  'unsupported-matrix': '/matrix',
  'non-finite-value': '/matrix',
  'magnitude-out-of-range': '/matrix',
  'invalid-entry': '/matrix',
  'too-large': '/matrix',
  'invalid-problem': '/matrix',
  'matrix-not-found': '/matrix',
  'upload-timeout': '/matrix',
  'body-too-large': '/matrix',
  'invalid-parameter': '/options',
};

interface Field {
  element: HTMLElement;
  problem: HTMLElement;
  control: HTMLElement;
  /** What gets focus when the field is refused, when not the control (a group's hidden anchor cannot take it). */
  focus?: () => HTMLElement | null | undefined;
}

export class SubmitFormView implements View {
  private readonly fields = new Map<string, Field>();
  private readonly form = h('form', { class: 'submit-form', novalidate: true, 'aria-labelledby': 'new-job-title' });
  // tabindex -1: focusable from script, so a problem without a field takes the focus the disabled button gave up.
  private readonly formProblem = h('div', { class: 'form-problem', role: 'alert', id: 'form-problem', tabindex: -1, hidden: true });
  private readonly button = h('button', { type: 'submit' }, 'Submit');
  /** Problems found while reading the form for one submit; nothing is sent while there are any. */
  private found: FieldError[] = [];
  /** The last matrix uploaded, by what it was uploaded from: a retry names it again rather than storing another copy. */
  private uploaded: { key: string; body: Blob | string; id: string } | null = null;
  private closed = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
  ) {}

  async open(query?: URLSearchParams): Promise<void> {
    this.render();
    const adviceId = query?.get('fromAdvice');
    if (adviceId) await this.prefillFromAdvice(adviceId);
  }

  close(): void {
    this.closed = true;
  }

  /** Solve the matrix of advise job `id` on its best partition: the form set to that, the algorithms and stopping left to the user. */
  private async prefillFromAdvice(id: string): Promise<void> {
    this.setChecked('type', 'solve');
    this.setValue('partitionKind', 'fromAdvice');
    this.setValue('fromAdvice', id);
    try {
      const job = await this.api.json<Job>('GET', `/v1/jobs/${encodeURIComponent(id)}`);
      if (this.closed) return;
      const { matrix } = job;
      if (matrix.format === 'stored' && matrix.id) {
        this.setChecked('source', 'stored');
        this.setValue('storedId', matrix.id);
      } else if (formHoldsMatrix(matrix) && matrix.generator) {
        this.setChecked('source', 'generator');
        for (const [name, value] of Object.entries(matrix.generator)) {
          if (name === 'permute') (this.form.elements.namedItem('permute') as HTMLInputElement).checked = value === true;
          else this.setValue(name, String(value));
        }
        // A default the job left out is the API's default, not the form's.
        for (const name of ['seed', 'mean', 'std', 'blockSize']) if (!(name in matrix.generator)) this.setValue(name, '');
      } else this.showFormProblem(`Advise job ${id}'s matrix (${matrix.format}) cannot be given on this form: choose it again.`);
    } catch (error) {
      if (error instanceof ProblemError) this.showFormProblem(`${error.problem.title}: ${error.problem.detail}`);
    }
    this.showRelevant();
  }

  private setValue(name: string, value: string): void {
    const element = this.form.elements.namedItem(name);
    if (element instanceof HTMLInputElement || element instanceof HTMLSelectElement) element.value = value;
  }

  private setChecked(name: string, value: string): void {
    const radio = this.form.querySelector<HTMLInputElement>(`input[name="${name}"][value="${value}"]`);
    if (radio) radio.checked = true;
  }

  private field(path: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
    const id = control.id || `field-${path.replace(/\W+/g, '-').replace(/^-|-$/g, '')}`;
    control.id = id;
    const problem = h('p', { class: 'field-problem', id: `${id}-problem`, role: 'alert', hidden: true });
    const hintElement = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
    control.setAttribute('aria-describedby', [hintElement?.id, problem.id].filter(Boolean).join(' '));
    const element = h('div', { class: 'field', 'data-path': path }, h('label', { for: id }, label), control, hintElement, problem);
    this.fields.set(path, { element, problem, control });
    return element;
  }

  private render(): void {
    const input = (name: string, attributes: Record<string, string | number | boolean> = {}): HTMLInputElement =>
      h('input', { name, type: 'number', ...attributes });

    const type = h(
      'fieldset',
      { class: 'choices' },
      h('legend', {}, 'Job'),
      ...radios('type', { analyze: 'Analyze only', solve: 'Analyze and solve', advise: 'Advise a partition' }, 'solve'),
    );
    const source = h(
      'fieldset',
      { class: 'choices' },
      h('legend', {}, 'Matrix'),
      ...radios(
        'source',
        { generator: 'Generator', paste: 'Paste Matrix Market', file: 'Matrix Market file', stored: 'Stored matrix' },
        'generator',
      ),
    );
    const generator = h(
      'select',
      { name: 'generator' },
      ...Object.entries(GENERATORS).map(([value, label]) => h('option', { value }, label)),
    );
    const generatorFields = h(
      'fieldset',
      { class: 'group', 'data-source': 'generator' },
      h('legend', {}, 'Generator'),
      this.field('/matrix/generator', 'Generator', generator),
      this.field('/matrix/n', 'n (rows and columns)', input('n', { value: 100, min: 1, step: 1 })),
      // Example 3 has no seed (it is not random): the API takes none, so the form shows none.
      h(
        'div',
        { 'data-generator': 'gaussian block-diagonal structured-gaussian' },
        this.field('/matrix/seed', 'Seed', input('seed', { value: 1, step: 1 }), 'Same parameters and seed: same matrix.'),
      ),
      h(
        'div',
        { 'data-generator': 'gaussian' },
        this.field('/matrix/mean', 'Mean', input('mean', { value: 1, step: 'any' })),
        this.field('/matrix/std', 'Standard deviation', input('std', { value: 1, step: 'any', min: 0 })),
      ),
      h(
        'div',
        { 'data-generator': 'block-diagonal structured-gaussian' },
        this.field(
          '/matrix/blockSize',
          'Block size',
          input('blockSize', { step: 1, min: 1 }),
          'Example 1: empty for one block per machine.',
        ),
      ),
      h(
        'div',
        { 'data-generator': 'block-diagonal' },
        h('label', { class: 'checkbox' }, h('input', { type: 'checkbox', name: 'permute' }), ' Permute the columns'),
      ),
      h(
        'div',
        { 'data-generator': 'structured-gaussian' },
        this.field('/matrix/sigma', 'Sigma (off-diagonal blocks)', input('sigma', { value: 0.1, step: 'any', min: 0 })),
      ),
      h('div', { 'data-generator': 'ones-minus-eps' }, this.field('/matrix/eps', 'eps', input('eps', { value: 0.01, step: 'any' }))),
    );
    const pasteFields = h(
      'fieldset',
      { class: 'group', 'data-source': 'paste', hidden: true },
      h('legend', {}, 'Matrix Market text'),
      this.field(
        '/matrix/data',
        'Matrix Market',
        h('textarea', { name: 'matrixMarket', rows: 8, spellcheck: 'false', placeholder: '%%MatrixMarket matrix coordinate real general' }),
      ),
    );
    const fileFields = h(
      'fieldset',
      { class: 'group', 'data-source': 'file', hidden: true },
      h('legend', {}, 'Matrix Market file'),
      this.field(
        '/matrix/file',
        'File (.mtx, or .mtx.gz)',
        h('input', { type: 'file', name: 'matrixFile', accept: '.mtx,.gz,text/plain' }),
        'Uploaded once to /v1/matrices, stored as CSR, then named by the job.',
      ),
    );
    const storedFields = h(
      'fieldset',
      { class: 'group', 'data-source': 'stored', hidden: true },
      h('legend', {}, 'Stored matrix'),
      this.field(
        '/matrix/id',
        'Matrix id',
        h('input', { name: 'storedId', type: 'text', class: 'id', spellcheck: 'false', autocomplete: 'off' }),
        'The id POST /v1/matrices answered (a job page names its stored matrix).',
      ),
    );

    const partitionKind = h(
      'select',
      { name: 'partitionKind' },
      h('option', { value: 'machines' }, 'm contiguous blocks'),
      h('option', { value: 'sizes' }, 'block sizes'),
      h('option', { value: 'assignment' }, 'assignment file'),
      h('option', { value: 'fromAdvice' }, 'the best of an advise job'),
    );
    const partition = h(
      'fieldset',
      { class: 'group' },
      h('legend', {}, 'Partition'),
      this.field('/partition/kind', 'Rows spread by', partitionKind),
      h(
        'div',
        { 'data-partition': 'machines' },
        this.field('/partition/machines', 'Machines (m)', input('machines', { value: 10, min: 1, step: 1 })),
      ),
      h(
        'div',
        { 'data-partition': 'sizes', hidden: true },
        this.field(
          '/partition/sizes',
          'Block sizes',
          h('input', { name: 'sizes', type: 'text', inputmode: 'numeric', placeholder: '30, 30, 40' }),
          'Comma-separated, summing to n.',
        ),
      ),
      h(
        'div',
        { 'data-partition': 'assignment', hidden: true },
        this.field(
          '/partition/assignment',
          'Assignment file',
          h('input', { name: 'assignment', type: 'file', accept: '.txt,.csv,text/plain' }),
          'The machine (0-based) of each row, in row order, separated by commas, spaces or lines.',
        ),
      ),
      h(
        'div',
        { 'data-partition': 'fromAdvice', hidden: true },
        this.field(
          '/partition/fromAdvice',
          'Advise job id',
          h('input', { name: 'fromAdvice', type: 'text', class: 'id', spellcheck: 'false', autocomplete: 'off' }),
          'The best candidate of that succeeded advise job, for a matrix with the same n.',
        ),
      ),
    );

    const algorithms = h(
      'fieldset',
      { class: 'choices', 'data-type': 'solve' },
      h('legend', {}, 'Algorithms'),
      ...ALGORITHMS.map((id) =>
        h(
          'label',
          { class: 'checkbox' },
          h('input', { type: 'checkbox', name: 'algorithms', value: id, checked: true }),
          ` ${ALGORITHM_NAMES[id]}`,
        ),
      ),
    );
    const algorithmsProblem = this.field('/algorithms', '', h('span', { hidden: true }));
    algorithmsProblem.querySelector('label')?.remove();
    this.fields.get('/algorithms')!.focus = () => algorithms.querySelector('input');
    const options = h(
      'fieldset',
      { class: 'group', 'data-type': 'solve' },
      h('legend', {}, 'Stopping'),
      this.field('/options/tolerance', 'Tolerance (relative residual)', input('tolerance', { step: 'any', placeholder: '1e-8' })),
      this.field('/options/maxIterations', 'Maximum iterations', input('maxIterations', { step: 1, min: 1, placeholder: '20000' })),
    );
    // An advise job's candidates improve on the partition above (API: options.imbalance, options.refinementTries).
    const adviceOptions = h(
      'fieldset',
      { class: 'group', 'data-type': 'advise' },
      h('legend', {}, 'Advice'),
      this.field(
        '/options/imbalance',
        'Imbalance',
        input('imbalance', { step: 'any', min: 0, max: 1, placeholder: '0.1' }),
        'Each machine of a constructed candidate holds between (1 - imbalance) n/m and (1 + imbalance) n/m rows.',
      ),
      this.field(
        '/options/refinementTries',
        'Refinement tries',
        input('refinementTries', { step: 1, min: 0, max: 64, placeholder: '8' }),
        "Exact kappa(S) evaluations the 'refined' candidate may spend (systems of at most 2000 rows); 0: none, a faster advice.",
      ),
    );
    const optionsProblem = this.field('/options', '', h('span', { hidden: true }));
    optionsProblem.querySelector('label')?.remove();
    this.fields.get('/options')!.focus = () =>
      [options, adviceOptions].find((group) => !group.hidden)?.querySelector<HTMLElement>('input') ?? null;

    clear(this.form);
    this.form.append(
      h('h1', { id: 'new-job-title' }, 'New job'),
      type,
      source,
      generatorFields,
      pasteFields,
      fileFields,
      storedFields,
      partition,
      algorithms,
      algorithmsProblem,
      options,
      adviceOptions,
      optionsProblem,
      this.formProblem,
      h('div', { class: 'actions' }, this.button),
    );
    this.form.addEventListener('change', () => this.showRelevant());
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
    clear(this.container);
    this.container.append(this.form);
    this.showRelevant();
  }

  private value(name: string): string {
    const element = this.form.elements.namedItem(name);
    if (element instanceof RadioNodeList) return element.value;
    if (element instanceof HTMLInputElement || element instanceof HTMLSelectElement || element instanceof HTMLTextAreaElement)
      return element.value;
    return '';
  }

  private showRelevant(): void {
    const source = this.value('source');
    const generator = this.value('generator');
    const type = this.value('type');
    const kind = this.value('partitionKind');
    for (const element of this.form.querySelectorAll<HTMLElement>('[data-source]')) element.hidden = element.dataset.source !== source;
    for (const element of this.form.querySelectorAll<HTMLElement>('[data-generator]'))
      element.hidden = !(element.dataset.generator ?? '').split(' ').includes(generator);
    for (const element of this.form.querySelectorAll<HTMLElement>('[data-type]')) element.hidden = element.dataset.type !== type;
    for (const element of this.form.querySelectorAll<HTMLElement>('[data-partition]')) element.hidden = element.dataset.partition !== kind;
  }

  /**
   * A number field as the API gets it: absent when empty, its number otherwise. One the browser cannot
   * read (`1e-`, `5e`: validity.badInput, value '') or a required one left empty is noted in `found`:
   * sent as absent, it would run the job on a default without a word, or draw a problem about "undefined".
   */
  private numberOf(name: string, required = false): number | undefined {
    const input = this.form.elements.namedItem(name) as HTMLInputElement;
    const path = input.closest<HTMLElement>('.field')?.dataset.path ?? `/${name}`;
    if (input.validity.badInput) {
      // A whole-number field (n, machines, iterations) is shown whole numbers only.
      const example = input.step === '1' ? 'a whole number, such as 250' : '250, 0.5 or 1e-8';
      this.found.push(fieldError(path, `not a number (write it as ${example}).`));
      return undefined;
    }
    const text = input.value.trim();
    if (text === '') {
      if (required) this.found.push(fieldError(path, 'a number is needed here.'));
      return undefined;
    }
    const value = Number(text);
    if (!Number.isFinite(value)) this.found.push(fieldError(path, `'${text}' is not a finite number.`));
    return value;
  }

  /** A list of whole numbers (block sizes, an assignment), each item checked: the API would get `null` for 'abc'. */
  private wholeNumbers(path: string, text: string, empty: string): NonEmpty<number> {
    const items = text.split(/[\s,;]+/).filter(Boolean);
    const notWhole = (item: string): boolean => !/^\+?\d+$/.test(item);
    const bad = items.findIndex(notWhole);
    if (items.length === 0) this.found.push(fieldError(path, empty));
    else if (bad >= 0) {
      const item = items[bad];
      const others = items.slice(bad + 1).filter(notWhole).length;
      const what = /^-\d+$/.test(item) ? 'is negative' : 'is not a whole number';
      this.found.push(
        fieldError(path, `'${item.slice(0, 40)}' (item ${bad + 1}) ${what}${others > 0 ? ` (and ${others} more after it)` : ''}.`),
      );
    }
    return items.map(Number) as NonEmpty<number>;
  }

  private async matrix(): Promise<MatrixPlan> {
    const source = this.value('source');
    if (source === 'paste') {
      const text = this.value('matrixMarket');
      if (text.length <= INLINE_LIMIT) return { request: { format: 'matrix-market', data: text } };
      return { upload: text, gzip: false };
    }
    if (source === 'file') {
      const file = (this.form.elements.namedItem('matrixFile') as HTMLInputElement).files?.[0];
      if (!file) {
        this.found.push(fieldError('/matrix/file', 'Choose a Matrix Market file.'));
        return { request: { format: 'stored', id: '' } };
      }
      // By its first bytes, the gzip magic number: X.MTX.GZ, or gzip data named .mtx, is gzip all the same.
      const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
      return { upload: file, gzip: head[0] === 0x1f && head[1] === 0x8b };
    }
    if (source === 'stored') return { request: { format: 'stored', id: this.value('storedId').trim() } };
    const generator = this.value('generator') as GeneratorName;
    const n = this.numberOf('n', true) as number;
    switch (generator) {
      case 'gaussian':
        return {
          request: {
            format: 'generator',
            generator,
            n,
            seed: this.numberOf('seed'),
            mean: this.numberOf('mean'),
            std: this.numberOf('std'),
          },
        };
      case 'block-diagonal':
        return {
          request: {
            format: 'generator',
            generator,
            n,
            seed: this.numberOf('seed'),
            blockSize: this.numberOf('blockSize'),
            permute: (this.form.elements.namedItem('permute') as HTMLInputElement).checked || undefined,
          },
        };
      case 'structured-gaussian':
        return {
          request: {
            format: 'generator',
            generator,
            n,
            seed: this.numberOf('seed'),
            blockSize: this.numberOf('blockSize', true) as number,
            sigma: this.numberOf('sigma', true) as number,
          },
        };
      case 'ones-minus-eps':
        return { request: { format: 'generator', generator, n, eps: this.numberOf('eps', true) as number } };
    }
  }

  /** The stored matrix for `body`: the one uploaded for it before (same file, or same name, size, date and gzip-ness), else a new upload. */
  private async storedMatrix(body: Blob | string, gzip: boolean): Promise<{ id: string; reused: boolean }> {
    const key = body instanceof File ? `file ${body.name} ${body.size} ${body.lastModified} ${gzip}` : `text ${gzip}`;
    const last = this.uploaded;
    if (last && (last.body === body || (body instanceof File && last.key === key))) return { id: last.id, reused: true };
    this.setBusy('Uploading…');
    const { id } = await this.uploadMatrix(body, gzip ? { 'content-encoding': 'gzip' } : {});
    this.uploaded = { key, body, id };
    return { id, reused: false };
  }

  private async uploadMatrix(body: Blob | string, headers: Record<string, string>): Promise<StoredMatrix> {
    try {
      return await this.api.upload<StoredMatrix>('/v1/matrices', body, { 'content-type': 'text/plain', ...headers });
    } catch (error) {
      // The upload's problems (syntax, size) are about the matrix field.
      if (error instanceof ProblemError && !error.problem.errors?.length)
        throw new ProblemError({
          ...error.problem,
          errors: [fieldError(this.value('source') === 'file' ? '/matrix/file' : '/matrix/data', error.problem.detail)],
        });
      throw error;
    }
  }

  private async partition(): Promise<CreateJobRequest['partition']> {
    const kind = this.value('partitionKind');
    if (kind === 'sizes')
      return { sizes: this.wholeNumbers('/partition/sizes', this.value('sizes'), 'Write the block sizes, e.g. 30, 30, 40.') };
    if (kind === 'assignment') {
      const file = (this.form.elements.namedItem('assignment') as HTMLInputElement).files?.[0];
      if (!file) {
        this.found.push(fieldError('/partition/assignment', 'Choose an assignment file.'));
        return { assignment: [0] };
      }
      return { assignment: this.wholeNumbers('/partition/assignment', await file.text(), 'The file lists no machine.') };
    }
    if (kind === 'fromAdvice') return { fromAdvice: this.value('fromAdvice').trim() };
    return { machines: this.numberOf('machines', true) as number };
  }

  /** While busy, the button says what the form is waiting for (an upload can take minutes) and the form is aria-busy. */
  private setBusy(text: string | null): void {
    this.button.disabled = text !== null;
    this.button.textContent = text ?? 'Submit';
    if (text) this.form.setAttribute('aria-busy', 'true');
    else this.form.removeAttribute('aria-busy');
  }

  private async submit(): Promise<void> {
    if (this.button.disabled) return;
    this.clearProblems();
    this.found = [];
    this.setBusy('Submitting…');
    try {
      const type = this.value('type') as CreateJobRequest['type'];
      const plan = await this.matrix();
      const body: CreateJobRequest = {
        type,
        matrix: 'request' in plan ? plan.request : { format: 'stored', id: '' },
        partition: await this.partition(),
      };
      if (type === 'solve') {
        body.algorithms = [...this.form.querySelectorAll<HTMLInputElement>('input[name="algorithms"]:checked')].map(
          (checkbox) => checkbox.value as (typeof ALGORITHMS)[number],
        ) as NonEmpty<AlgorithmId>;
        if (body.algorithms.length === 0) this.found.push(fieldError('/algorithms', 'Check at least one algorithm.'));
        const tolerance = this.numberOf('tolerance');
        const maxIterations = this.numberOf('maxIterations');
        if (tolerance !== undefined || maxIterations !== undefined) body.options = { tolerance, maxIterations };
      }
      if (type === 'advise') {
        const imbalance = this.numberOf('imbalance');
        const refinementTries = this.numberOf('refinementTries');
        if (imbalance !== undefined || refinementTries !== undefined) body.options = { imbalance, refinementTries };
      }
      // Nothing leaves (not even the upload) while a field is known to be wrong.
      if (this.found.length > 0) {
        this.showProblem({ type: 'about:blank', title: 'Not sent', status: 400, detail: 'Correct the marked fields.', errors: this.found });
        return;
      }
      const job = await this.post(body, plan);
      if (this.closed) return;
      announce(`Job ${job.id} submitted.`);
      location.hash = `#/jobs/${job.id}`;
    } catch (error) {
      if (error instanceof ProblemError) this.showProblem(error.problem);
      else if (error instanceof SubmitTimeout)
        this.showFormProblem(
          `No answer from the service within ${SUBMIT_TIMEOUT_MS / 1000} s. The job may still have been created: ` +
            'look for it in the jobs list before submitting again.',
          true,
        );
      else this.showFormProblem(String(error), true);
    } finally {
      this.setBusy(null);
      // The disabled button dropped the focus; a problem above took it, else it comes back here.
      if (!this.closed && (document.activeElement === document.body || !document.activeElement)) this.button.focus();
    }
  }

  /**
   * Upload the matrix if it must be (or name the one uploaded for it before), then POST the job, abandoned
   * after SUBMIT_TIMEOUT_MS without an answer. A reused stored matrix that has since gone (expired, deleted)
   * is uploaded again, once.
   */
  private async post(body: CreateJobRequest, plan: MatrixPlan): Promise<Job> {
    for (let attempt = 0; ; attempt++) {
      let reused = false;
      if ('upload' in plan) {
        const stored = await this.storedMatrix(plan.upload, plan.gzip);
        body.matrix = { format: 'stored', id: stored.id };
        reused = stored.reused;
      }
      this.setBusy('Submitting…');
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new SubmitTimeout()), SUBMIT_TIMEOUT_MS);
      try {
        return await this.api.json<Job>('POST', '/v1/jobs', body, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) throw new SubmitTimeout();
        if (reused && attempt === 0 && error instanceof ProblemError && error.problem.code === 'matrix-not-found') {
          this.uploaded = null;
          continue;
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    }
  }

  private clearProblems(): void {
    for (const { problem, control } of this.fields.values()) {
      problem.hidden = true;
      problem.textContent = '';
      control.removeAttribute('aria-invalid');
    }
    this.formProblem.hidden = true;
    clear(this.formProblem);
  }

  /** Each field-level error next to its field (the deepest field its path names), the rest above the button. */
  private showProblem(problem: Problem): void {
    const unplaced: string[] = [];
    const area = FIELD_OF_CODE[problem.code ?? ''];
    const errors = problem.errors?.length
      ? problem.errors
      : [fieldError(area ? this.visibleFieldOf(area.slice(1), problem.code) : '', problem.detail)];
    let first: Field | undefined;
    for (const error of errors) {
      const field = this.fieldFor(error.path, problem.code);
      if (!field) {
        unplaced.push(error.path ? `${error.path}: ${error.message}` : error.message);
        continue;
      }
      field.problem.hidden = false;
      field.problem.append(h('span', { class: 'problem-title' }, `${problem.title}: `), error.message, ' ');
      field.control.setAttribute('aria-invalid', 'true');
      first ??= field;
    }
    if (unplaced.length > 0 || !first) this.showFormProblem(`${problem.title}: ${unplaced.join('; ') || problem.detail}`);
    const target = first ? (first.focus?.() ?? first.control) : this.formProblem;
    target.focus();
    first?.element.scrollIntoView({ block: 'center' });
    announce(`Refused: ${problem.title}.`);
  }

  private fieldFor(path: string, code?: string): Field | undefined {
    // A path such as /matrix/n or /partition/machines/0: the deepest field shown on the form; else
    // the field that holds that part of the request as the form is set (e.g. /partition: the machines).
    const segments = path.split('/');
    for (let length = segments.length; length > 1; length--) {
      const field = this.fields.get(segments.slice(0, length).join('/'));
      if (field && !field.element.closest('[hidden]')) return field;
    }
    const fallback = this.fields.get(this.visibleFieldOf(segments[1] ?? '', code));
    return fallback && !fallback.element.closest('[hidden]') ? fallback : undefined;
  }

  /** The field shown for a part of the request: the matrix's source, the partition's kind. */
  private visibleFieldOf(part: string, code?: string): string {
    if (part === 'partition') return `/partition/${this.value('partitionKind')}`;
    if (part === 'matrix') {
      const source = this.value('source');
      if (source === 'paste') return '/matrix/data';
      if (source === 'file') return '/matrix/file';
      if (source === 'stored') return '/matrix/id';
      // A generated matrix too large is too large by its n.
      return code === 'too-large' ? '/matrix/n' : '/matrix/generator';
    }
    return `/${part}`;
  }

  private showFormProblem(text: string, focus = false): void {
    this.formProblem.hidden = false;
    this.formProblem.textContent = text;
    if (focus) this.formProblem.focus();
  }
}

/** The job's POST went unanswered for SUBMIT_TIMEOUT_MS (the abort's reason). */
class SubmitTimeout extends Error {
  constructor() {
    super('no answer from the service');
    this.name = 'SubmitTimeout';
  }
}

function radios(name: string, choices: Record<string, string>, checked: string): HTMLElement[] {
  return Object.entries(choices).map(([value, label]) =>
    h('label', { class: 'radio' }, h('input', { type: 'radio', name, value, checked: value === checked }), ` ${label}`),
  );
}

/** A field-level error as the API words one (its pointer and text under both their names). */
function fieldError(pointer: string, detail: string): NonNullable<Problem['errors']>[number] {
  return { pointer, detail, path: pointer, message: detail };
}
