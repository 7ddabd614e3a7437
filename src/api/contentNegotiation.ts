/**
 * Proactive content negotiation (RFC 9110 12.5.1): the media type to answer with, of those a
 * resource comes in, from the request's `Accept`. Each offered type takes the quality of the most
 * specific range that matches it (type/subtype, then type/*, then * / *); the highest quality wins,
 * ties go to the order of `offered` (its first is the default, also for a missing Accept).
 */

/** Accept admits none of the offered media types: the error handler answers 406 (`not-acceptable`). */
export class NotAcceptableError extends Error {
  constructor(
    readonly accept: string,
    readonly offered: readonly string[],
  ) {
    super(`Accept: ${accept} admits none of the media types this resource comes in: ${offered.join(', ')}.`);
    this.name = 'NotAcceptableError';
  }
}

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of accept.split(',')) {
    const [range, ...parameters] = part.split(';').map((piece) => piece.trim());
    const [type, subtype] = range.toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const parameter of parameters) {
      const [name, value] = parameter.split('=').map((piece) => piece.trim());
      if (name.toLowerCase() === 'q') q = Number(value);
    }
    if (Number.isFinite(q)) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The quality `ranges` give `mediaType`: that of the most specific matching range, 0 when none matches. */
function qualityOf(mediaType: string, ranges: MediaRange[]): number {
  const [type, subtype] = mediaType.split('/');
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === '*' ? 1 : range.type === '*' ? 0 : -1;
    if (specificity > best) {
      best = specificity;
      q = range.q;
    }
  }
  return q;
}

export function negotiate<T extends string>(accept: string | undefined, offered: readonly T[]): T {
  if (accept === undefined || accept.trim() === '') return offered[0];
  const ranges = parseAccept(accept);
  let chosen: T | null = null;
  let bestQ = 0;
  for (const mediaType of offered) {
    const q = qualityOf(mediaType, ranges);
    if (q > bestQ) {
      bestQ = q;
      chosen = mediaType;
    }
  }
  if (chosen === null) throw new NotAcceptableError(accept, offered);
  return chosen;
}
