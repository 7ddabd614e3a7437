/**
 * `#/new`: a job from a form (analyze, solve, or advise a partition with its imbalance and refinement
 * tries). The matrix is a generator (Gaussian or the paper's Examples 1-3) with
 * its parameters, pasted Matrix Market text, or a Matrix Market file; files (and pasted text over
 * INLINE_LIMIT) are uploaded once through POST /v1/matrices and named by id, so a large matrix never
 * travels inside a JSON body. The form does no validation of its own (`novalidate`): the API is the
 * one judge, and a refused request's problem is shown next to the field it names.
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

const GENERATORS = {
  gaussian: 'Gaussian (mean, std)',
  'block-diagonal': 'Example 1: block diagonal (totally orthogonal)',
  'structured-gaussian': 'Example 2: structured Gaussian (blocks, sigma)',
  'ones-minus-eps': 'Example 3: ones minus eps',
} as const;
type GeneratorName = keyof typeof GENERATORS;
/** The API's lists with a minimum length; an empty one is sent anyway, for the API to refuse by name. */
type NonEmpty<T> = [T, ...T[]];

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
}

export class SubmitFormView implements View {
  private readonly fields = new Map<string, Field>();
  private readonly form = h('form', { class: 'submit-form', novalidate: true, 'aria-labelledby': 'new-job-title' });
  private readonly formProblem = h('div', { class: 'form-problem', role: 'alert', id: 'form-problem', hidden: true });
  private closed = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
  ) {}

  open(): Promise<void> {
    this.render();
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
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
      ...radios('source', { generator: 'Generator', paste: 'Paste Matrix Market', file: 'Matrix Market file' }, 'generator'),
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
      this.field('/matrix/seed', 'Seed', input('seed', { value: 1, step: 1 }), 'Same parameters and seed: same matrix.'),
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

    const partitionKind = h(
      'select',
      { name: 'partitionKind' },
      h('option', { value: 'machines' }, 'm contiguous blocks'),
      h('option', { value: 'sizes' }, 'block sizes'),
      h('option', { value: 'assignment' }, 'assignment file'),
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

    clear(this.form);
    this.form.append(
      h('h1', { id: 'new-job-title' }, 'New job'),
      type,
      source,
      generatorFields,
      pasteFields,
      fileFields,
      partition,
      algorithms,
      algorithmsProblem,
      options,
      adviceOptions,
      optionsProblem,
      this.formProblem,
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Submit')),
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

  /** A number field as the API gets it: absent when empty, the number otherwise (a non-number is sent as is, for the API to name). */
  private numberOf(name: string): number | undefined {
    const text = this.value(name).trim();
    if (text === '') return undefined;
    const value = Number(text);
    return Number.isNaN(value) ? (text as unknown as number) : value;
  }

  private async matrix(): Promise<CreateJobRequest['matrix']> {
    const source = this.value('source');
    if (source === 'paste') {
      const text = this.value('matrixMarket');
      if (text.length <= INLINE_LIMIT) return { format: 'matrix-market', data: text };
      return { format: 'stored', id: (await this.uploadMatrix(text, {})).id };
    }
    if (source === 'file') {
      const file = (this.form.elements.namedItem('matrixFile') as HTMLInputElement).files?.[0];
      if (!file) throw new ProblemError(localProblem('/matrix/file', 'Choose a Matrix Market file.'));
      const headers: Record<string, string> = file.name.endsWith('.gz') ? { 'content-encoding': 'gzip' } : {};
      return { format: 'stored', id: (await this.uploadMatrix(file, headers)).id };
    }
    const generator = this.value('generator') as GeneratorName;
    const n = this.numberOf('n') as number;
    const seed = this.numberOf('seed');
    switch (generator) {
      case 'gaussian':
        return { format: 'generator', generator, n, seed, mean: this.numberOf('mean'), std: this.numberOf('std') };
      case 'block-diagonal':
        return {
          format: 'generator',
          generator,
          n,
          seed,
          blockSize: this.numberOf('blockSize'),
          permute: (this.form.elements.namedItem('permute') as HTMLInputElement).checked || undefined,
        };
      case 'structured-gaussian':
        return {
          format: 'generator',
          generator,
          n,
          seed,
          blockSize: this.numberOf('blockSize') as number,
          sigma: this.numberOf('sigma') as number,
        };
      case 'ones-minus-eps':
        return { format: 'generator', generator, n, eps: this.numberOf('eps') as number };
    }
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
      return {
        sizes: this.value('sizes')
          .split(/[\s,;]+/)
          .filter(Boolean)
          .map(Number) as NonEmpty<number>,
      };
    if (kind === 'assignment') {
      const file = (this.form.elements.namedItem('assignment') as HTMLInputElement).files?.[0];
      if (!file) throw new ProblemError(localProblem('/partition/assignment', 'Choose an assignment file.'));
      return {
        assignment: (await file.text())
          .split(/[\s,;]+/)
          .filter(Boolean)
          .map(Number) as NonEmpty<number>,
      };
    }
    return { machines: this.numberOf('machines') as number };
  }

  private async submit(): Promise<void> {
    this.clearProblems();
    const button = this.form.querySelector('button[type="submit"]') as HTMLButtonElement;
    button.disabled = true;
    try {
      const type = this.value('type') as CreateJobRequest['type'];
      const body: CreateJobRequest = { type, matrix: await this.matrix(), partition: await this.partition() };
      if (type === 'solve') {
        body.algorithms = [...this.form.querySelectorAll<HTMLInputElement>('input[name="algorithms"]:checked')].map(
          (checkbox) => checkbox.value as (typeof ALGORITHMS)[number],
        ) as NonEmpty<AlgorithmId>;
        const tolerance = this.numberOf('tolerance');
        const maxIterations = this.numberOf('maxIterations');
        if (tolerance !== undefined || maxIterations !== undefined) body.options = { tolerance, maxIterations };
      }
      if (type === 'advise') {
        const imbalance = this.numberOf('imbalance');
        const refinementTries = this.numberOf('refinementTries');
        if (imbalance !== undefined || refinementTries !== undefined) body.options = { imbalance, refinementTries };
      }
      const job = await this.api.json<Job>('POST', '/v1/jobs', body);
      if (this.closed) return;
      announce(`Job ${job.id} submitted.`);
      location.hash = `#/jobs/${job.id}`;
    } catch (error) {
      if (error instanceof ProblemError) this.showProblem(error.problem);
      else this.showFormProblem(String(error));
    } finally {
      button.disabled = false;
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
      const field = this.fieldFor(error.path);
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
    (first?.control ?? this.formProblem).focus?.();
    first?.element.scrollIntoView({ block: 'center' });
    announce(`Refused: ${problem.title}.`);
  }

  private fieldFor(path: string): Field | undefined {
    // A path such as /matrix/n or /partition/machines/0: the deepest field shown on the form; else
    // the field that holds that part of the request as the form is set (e.g. /partition: the machines).
    const segments = path.split('/');
    for (let length = segments.length; length > 1; length--) {
      const field = this.fields.get(segments.slice(0, length).join('/'));
      if (field && !field.element.closest('[hidden]')) return field;
    }
    const fallback = this.fields.get(this.visibleFieldOf(segments[1] ?? ''));
    return fallback && !fallback.element.closest('[hidden]') ? fallback : undefined;
  }

  /** The field shown for a part of the request: the matrix's source, the partition's kind. */
  private visibleFieldOf(part: string, code?: string): string {
    if (part === 'partition') return `/partition/${this.value('partitionKind')}`;
    if (part === 'matrix') {
      const source = this.value('source');
      if (source === 'paste') return '/matrix/data';
      if (source === 'file') return '/matrix/file';
      return code === 'too-large' ? '/matrix/n' : '/matrix/generator';
    }
    return `/${part}`;
  }

  private showFormProblem(text: string): void {
    this.formProblem.hidden = false;
    this.formProblem.textContent = text;
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

/** A problem found before sending (a missing file), shown like the API's. */
function localProblem(path: string, message: string): Problem {
  return { type: 'about:blank', title: 'Missing input', status: 400, detail: message, errors: [fieldError(path, message)] };
}
