/** The heatmap's sizes that need no DOM (./heatmap.ts draws with them; tests read them in Node). */

/**
 * The theta_H pair's ring: around a small cell, at least 6 px across when cells are tiny (m in the hundreds); inside a
 * large one (m = 2 to 4: around it, it covered the machines' numbers and was cut at the map's edges).
 */
export function ringRadius(cell: number, ratio: number): number {
  return cell >= 24 * ratio ? cell * 0.4 : Math.max(cell * 0.6, 6 * ratio);
}
