/**
 * Pictures of a job's partitions (GET /v1/jobs/{id}/figures/partition.svg): A's sparsity pattern with
 * each row in its machine's colour. An advise job shows two side by side, before (the given
 * partition) and after (the best), one under the other on a narrow screen; other jobs their own.
 * A choice draws the rows in the matrix's order or grouped by machine (where a good partition shows
 * its diagonal blocks). The SVG is fetched with the API key and shown as an <img> of a data: URL,
 * which the CSP allows and in which nothing of it can run.
 */
import type { ApiClient } from './apiClient.js';
import { h } from './dom.js';

export interface PictureSpec {
  /** The candidate's strategy; absent: the job's own partition. */
  strategy?: string;
  caption: string;
}

type Order = 'machine' | 'matrix';

/** The pictures and the order choice; `problemBox` shows a failed request in place of its picture. */
export function partitionPictures(
  api: ApiClient,
  jobId: string,
  specs: PictureSpec[],
  problemBox: (error: unknown) => HTMLElement,
): HTMLElement {
  const figures = specs.map((spec) => {
    const image = h('img', { class: 'partition-image', alt: `${spec.caption}: loading` });
    const figure = h(
      'figure',
      { class: 'partition-picture', 'data-strategy': spec.strategy ?? 'given' },
      h('figcaption', {}, spec.caption),
      image,
    );
    return { spec, figure, image };
  });
  const load = async (order: Order): Promise<void> => {
    await Promise.all(
      figures.map(async ({ spec, figure, image }) => {
        figure.querySelector('.problem')?.remove();
        const query = new URLSearchParams({ order, ...(spec.strategy ? { strategy: spec.strategy } : {}) });
        try {
          const response = await api.send('GET', `/v1/jobs/${encodeURIComponent(jobId)}/figures/partition.svg?${query}`, undefined, {
            accept: 'image/svg+xml',
          });
          const svg = await response.text();
          const title = /<title>([^<]*)<\/title>/.exec(svg)?.[1] ?? spec.caption;
          image.alt = `${spec.caption}: ${title.replace(/&amp;/g, '&')}; rows ${order === 'machine' ? 'grouped by machine' : "in the matrix's order"}`;
          image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
          await image.decode().catch(() => undefined);
          figure.dataset.loaded = order;
        } catch (error) {
          figure.append(problemBox(error));
        }
      }),
    );
  };
  const choices = h(
    'fieldset',
    { class: 'choices inline partition-order' },
    h('legend', {}, 'Rows'),
    ...(
      [
        ['machine', 'grouped by machine'],
        ['matrix', "in the matrix's order"],
      ] as [Order, string][]
    ).map(([value, label]) => {
      const radio = h('input', { type: 'radio', name: `partition-order-${jobId}`, value, checked: value === 'machine' });
      radio.addEventListener('change', () => void load(value));
      return h('label', { class: 'radio' }, radio, ` ${label}`);
    }),
  );
  void load('machine');
  return h(
    'div',
    { class: 'partition-pictures-block' },
    choices,
    h('div', { class: 'partition-pictures' }, ...figures.map(({ figure }) => figure)),
    h(
      'p',
      { class: 'hint' },
      'Each nonzero of A in the colour of the machine holding its row (a cell of many entries: the machine holding most of them). ',
      'Grouped by machine, a partition whose machines share no columns shows as diagonal blocks: kappa(S) = 1.',
    ),
  );
}
