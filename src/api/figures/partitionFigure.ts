/**
 * A picture of a partition (GET /v1/jobs/{id}/figures/partition.svg): A's sparsity pattern with each
 * nonzero coloured by the machine holding its row, downsampled (./partitionRaster.ts) and drawn as a
 * palette PNG inside the SVG, so that n = 10^6 stays a few tens of KB. A strip left of the pattern
 * colours each band of rows by its machine. In the matrix's order a shuffled matrix looks scattered;
 * grouped by machine, a partition whose machines share no columns shows as m diagonal blocks (S = I).
 */
import { palettePng } from './png.js';
import { partitionRaster, type PatternSource, type RowOrder } from './partitionRaster.js';
import { escapeXml, formatValue } from './svgPlot.js';

/** One colour per machine, cycling past the last (machine k has colour k mod 20). */
export const MACHINE_COLORS: readonly { name: string; hex: string }[] = [
  { name: 'blue', hex: '#0072b2' },
  { name: 'vermillion', hex: '#d55e00' },
  { name: 'green', hex: '#009e73' },
  { name: 'reddish purple', hex: '#cc79a7' },
  { name: 'orange', hex: '#e69f00' },
  { name: 'sky blue', hex: '#56b4e9' },
  { name: 'black', hex: '#000000' },
  { name: 'yellow', hex: '#f0e442' },
  { name: 'maroon', hex: '#800000' },
  { name: 'navy', hex: '#000075' },
  { name: 'olive', hex: '#808000' },
  { name: 'teal', hex: '#469990' },
  { name: 'magenta', hex: '#f032e6' },
  { name: 'lime', hex: '#bfef45' },
  { name: 'brown', hex: '#9a6324' },
  { name: 'grey', hex: '#808080' },
  { name: 'purple', hex: '#911eb4' },
  { name: 'red', hex: '#e6194b' },
  { name: 'pink', hex: '#fabed4' },
  { name: 'cyan', hex: '#42d4f4' },
];

/** The PNG's palette: index 0 is an empty cell (white), index 1 + (k mod 20) machine k. */
const PALETTE = ['#ffffff', ...MACHINE_COLORS.map((color) => color.hex)];

export interface PartitionFigure {
  source: PatternSource;
  assignment: Int32Array;
  m: number;
  order: RowOrder;
  /** What the title calls the partition, e.g. 'given partition' or 'best: multilevel'. */
  name: string;
  /** The candidate's strategy ('given' for a job's own partition). */
  strategy: string;
  /** kappa(S) of the partition; null when not computed (yet). */
  kappaS: number | null;
}

const WIDTH = 560;
const IMAGE = 420;
const LEFT = 96;
const TOP = 74;
const STRIP = 10;
const ROW = 17;
/** Below this many machines, lines between the machines' bands and their numbers beside the strip. */
const MAX_BANDS_DRAWN = 64;

const round = (value: number): string => String(Math.round(value * 100) / 100);

function pngDataUrl(width: number, height: number, pixels: Uint8Array): string {
  return `data:image/png;base64,${palettePng(width, height, pixels, PALETTE).toString('base64')}`;
}

const pixelOf = (machine: number): number => (machine < 0 ? 0 : 1 + (machine % MACHINE_COLORS.length));

export function renderPartitionFigure(figure: PartitionFigure): string {
  const { m, order } = figure;
  const raster = partitionRaster(figure.source, figure.assignment, m, order);
  const { n, cells, columnCells } = raster;
  // A tall matrix's columns fill the first columnCells of each band: the picture keeps those (N x n, not N x N).
  const pixels = new Uint8Array(cells * columnCells);
  for (let r = 0; r < cells; r++)
    for (let c = 0; c < columnCells; c++) pixels[r * columnCells + c] = pixelOf(raster.machine[r * cells + c]);
  const imageWidth = (IMAGE * columnCells) / cells;
  const strip = Uint8Array.from(raster.rowMachine, pixelOf);
  // As the advice's summary and the dashboard write it: 4 significant digits (3.405e+4).
  const kappa = figure.kappaS === null ? 'κ(S) not computed' : `κ(S) = ${formatValue(figure.kappaS, 4)}`;
  const title = `${figure.name}: ${kappa}`;
  const grouped = order === 'machine';
  // Positions in cell units: the image spans cells * perCell rows (the last cell may be partly past n).
  const span = cells * raster.perCell;
  const toY = (position: number): number => TOP + (position / span) * IMAGE;
  const toX = (position: number): number => LEFT + (position / span) * IMAGE;

  const parts: string[] = [];
  parts.push(
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${WIDTH / 2}" y="42" text-anchor="middle" font-size="12" fill="#333">n = ${n}, m = ${m}, ${raster.nnz} nonzeros; ${
      grouped ? 'rows and columns grouped by machine' : "rows and columns in the matrix's order"
    }</text>`,
    `<text x="${LEFT + IMAGE / 2}" y="${TOP - 8}" text-anchor="middle" font-size="12">${grouped ? 'columns, by the machine holding most of their nonzeros' : 'columns'}</text>`,
    `<text x="16" y="${TOP + IMAGE / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 16 ${TOP + IMAGE / 2})">${grouped ? 'rows, by machine' : 'rows'}</text>`,
  );
  // The row strip and the pattern; pixelated, so that a small matrix's cells keep their edges.
  parts.push(
    `<image class="row-machines" x="${LEFT - STRIP - 4}" y="${TOP}" width="${STRIP}" height="${IMAGE}" preserveAspectRatio="none" image-rendering="pixelated" href="${pngDataUrl(1, cells, strip)}"/>`,
    `<image class="raster" data-cells="${cells}" data-per-cell="${raster.perCell}" x="${LEFT}" y="${TOP}" width="${round(imageWidth)}" height="${IMAGE}" preserveAspectRatio="none" image-rendering="pixelated" href="${pngDataUrl(columnCells, cells, pixels)}"/>`,
    `<rect x="${LEFT}" y="${TOP}" width="${round(imageWidth)}" height="${IMAGE}" fill="none" stroke="#444"/>`,
  );
  if (grouped && raster.rowStarts && raster.columnStarts && m <= MAX_BANDS_DRAWN) {
    for (let machine = 1; machine < m; machine++) {
      const y = round(toY(raster.rowStarts[machine]));
      const x = round(toX(raster.columnStarts[machine]));
      parts.push(`<line class="band" x1="${LEFT}" y1="${y}" x2="${round(LEFT + imageWidth)}" y2="${y}" stroke="#999" stroke-width="0.5"/>`);
      parts.push(`<line class="band" x1="${x}" y1="${TOP}" x2="${x}" y2="${TOP + IMAGE}" stroke="#999" stroke-width="0.5"/>`);
    }
    for (let machine = 0; machine < m; machine++) {
      const from = toY(raster.rowStarts[machine]);
      const to = toY(raster.rowStarts[machine + 1]);
      if (to - from >= 12)
        parts.push(
          `<text class="machine-label" x="${LEFT - STRIP - 8}" y="${round((from + to) / 2 + 4)}" text-anchor="end" font-size="11">${machine}</text>`,
        );
    }
  } else {
    parts.push(
      `<text x="${LEFT - STRIP - 8}" y="${TOP + 10}" text-anchor="end" font-size="11">1</text>`,
      `<text x="${LEFT - STRIP - 8}" y="${TOP + IMAGE}" text-anchor="end" font-size="11">${n}</text>`,
    );
  }

  // The colour key: each machine when few, else the 20 colours and how they repeat.
  const cycling = m > MACHINE_COLORS.length;
  const keys = cycling ? MACHINE_COLORS.map((_, k) => k) : Array.from({ length: m }, (_, k) => k);
  const entryWidth = cycling ? 46 : 96;
  const perRow = Math.floor((WIDTH - 40) / entryWidth);
  let y = TOP + IMAGE + 24;
  parts.push(`<g class="legend">`);
  keys.forEach((machine, k) => {
    const x = 20 + (k % perRow) * entryWidth;
    const top = y + Math.floor(k / perRow) * ROW;
    const color = MACHINE_COLORS[machine % MACHINE_COLORS.length];
    parts.push(
      `<rect class="swatch" data-machine="${machine}" data-color="${color.hex}" x="${x}" y="${top - 10}" width="12" height="12" fill="${color.hex}" stroke="#444" stroke-width="0.5"><title>${color.name}</title></rect>`,
      `<text x="${x + 17}" y="${top}" font-size="12">${cycling ? machine : `machine ${machine}`}</text>`,
    );
  });
  parts.push('</g>');
  y += Math.ceil(keys.length / perRow) * ROW + 4;
  const notes = [
    ...(cycling
      ? [`Colours repeat every ${MACHINE_COLORS.length} machines: machine k has the colour of k mod ${MACHINE_COLORS.length}.`]
      : []),
    raster.perCell > 1
      ? `${cells} x ${cells} cells of ${raster.perCell} x ${raster.perCell} entries, each in the colour of the machine`
      : 'Each entry in the colour of its machine (white: zero).',
    ...(raster.perCell > 1 ? ['holding most of its nonzeros (white: none).'] : []),
    'The strip left of the pattern: the machine of each band of rows.',
  ];
  for (const note of notes) {
    parts.push(`<text class="note" x="20" y="${y}" font-size="12" fill="#333">${escapeXml(note)}</text>`);
    y += ROW;
  }
  const height = y + 4;
  const data = [
    `data-n="${n}"`,
    `data-m="${m}"`,
    `data-order="${order}"`,
    `data-strategy="${escapeXml(figure.strategy)}"`,
    `data-kappa-s="${figure.kappaS ?? ''}"`,
    ...(raster.rowStarts ? [`data-row-starts="${raster.rowStarts.join(' ')}"`] : []),
    ...(raster.columnStarts ? [`data-column-starts="${raster.columnStarts.join(' ')}"`] : []),
  ].join(' ');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="white"/>`,
    `<g class="partition" ${data}>`,
    ...parts,
    '</g>',
    '</svg>',
    '',
  ].join('\n');
}
