/**
 * Labels: up to MAX_LABELS string pairs on a job or a study (src/jobs/types.ts Labels), and the
 * `label=key:value` query parameter (repeatable) that filters lists by them.
 */
import { z } from 'zod';
import { LABEL_KEY_PATTERN, MAX_LABEL_VALUE_LENGTH, MAX_LABELS, type Labels } from '../../jobs/types.js';
import { assertSameShape } from './sameShape.js';

export const LabelsSchema = z
  .record(z.string().regex(LABEL_KEY_PATTERN), z.string().max(MAX_LABEL_VALUE_LENGTH))
  .refine((labels) => Object.keys(labels).length <= MAX_LABELS, { message: `At most ${MAX_LABELS} labels.` })
  .meta({
    id: 'Labels',
    maxProperties: MAX_LABELS,
    description:
      `Up to ${MAX_LABELS} string pairs (keys ${LABEL_KEY_PATTERN.source}, values up to ${MAX_LABEL_VALUE_LENGTH} characters), ` +
      'stored and echoed as given; lists filter on them with `label=key:value`.',
  });

const LabelFilter = z
  .string()
  .max(64 + 1 + MAX_LABEL_VALUE_LENGTH)
  .regex(/^[A-Za-z0-9_.-]{1,64}:/, 'A label filter is key:value (the key as labels have it, then a colon).');

/**
 * `label=key:value`, repeatable (every one must match): query parsing gives a string for one, an
 * array for several; both become the Labels to match (the value is everything after the first colon).
 */
export const LabelQuerySchema = z
  .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(LabelFilter).max(MAX_LABELS))
  .optional()
  .describe('Only items carrying this label, written `key:value`; repeat the parameter to require several (all must match).');

/** The filters as [key, value] pairs (the value is everything after the first colon). */
export function labelPairs(filters: readonly string[] | undefined): [string, string][] | undefined {
  if (!filters || filters.length === 0) return undefined;
  return filters.map((filter) => [filter.slice(0, filter.indexOf(':')), filter.slice(filter.indexOf(':') + 1)]);
}

assertSameShape<z.output<typeof LabelsSchema>, Labels>(true);
