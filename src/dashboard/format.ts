/** Numbers and times as the dashboard shows them. */

/** 4 significant digits; exponent notation outside [1e-3, 1e5). */
export function formatNumber(value: number | null | undefined, digits = 4): string {
  if (value === null || value === undefined) return '—';
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e5 || magnitude < 1e-3) return value.toExponential(digits - 1);
  return Number(value.toPrecision(digits)).toString();
}

export function formatInteger(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

/** An angle in radians, with degrees alongside. */
export function formatAngle(radians: number | null | undefined): string {
  if (radians === null || radians === undefined) return '—';
  return `${formatNumber(radians)} rad (${formatNumber((radians * 180) / Math.PI, 3)}°)`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return date.toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'medium' });
}

export function formatDuration(startIso: string | null, endIso: string | null): string {
  if (!startIso || !endIso) return '—';
  const ms = Date.parse(endIso) - Date.parse(startIso);
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export const yesNo = (value: boolean): string => (value ? 'yes' : 'no');
