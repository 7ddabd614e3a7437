/**
 * Colours of the six algorithms: the Okabe-Ito palette (distinguishable with the common colour
 * vision deficiencies). Colour is never the only cue: charts label each line by name and draw the
 * theoretical rates dashed.
 */
import type { AlgorithmId } from './apiTypes.js';

export const ALGORITHM_COLORS: Record<AlgorithmId, string> = {
  apc: '#0072B2',
  dhbm: '#D55E00',
  dgd: '#009E73',
  dnag: '#CC79A7',
  cimmino: '#E69F00',
  mlm: '#56B4E9',
};

/** Dash pattern of the theoretical-rate lines. */
export const THEORY_DASH = [7, 5];

/**
 * theta in [0, pi/2] to a colour whose lightness grows with the angle (viridis stops), so the
 * heatmap reads the same in grey: dark = small angle (nearly parallel machines), light = orthogonal.
 */
const VIRIDIS: [number, number, number][] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

export function viridis(fraction: number): [number, number, number] {
  const t = Math.min(1, Math.max(0, fraction)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(t));
  const f = t - i;
  const [a, b] = [VIRIDIS[i], VIRIDIS[i + 1]];
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}
