/**
 * Pages of an id index, newest first, with an opaque `cursor` (GET /v1/jobs, /v1/studies,
 * /v1/matrices): the cursor is the id of the last entry a page covered (indexes are ordered by id,
 * and ULIDs sort by creation time), versioned and base64url-encoded.
 */
import { InvalidCursorError } from '../errors.js';
import { JOB_ID_PATTERN } from '../jobId.js';
import type { Labels } from '../types.js';

const CURSOR_PREFIX = 'j1:';

/** Most index entries one list request reads (filters over long histories return short pages, with a cursor). */
const LIST_SCAN_BUDGET = 5000;

export function encodeCursor(id: string): string {
  return Buffer.from(CURSOR_PREFIX + id, 'utf8').toString('base64url');
}

/**
 * The id a cursor continues after; throws InvalidCursorError for anything this service did not
 * issue, naming `list`, the operation whose `nextCursor` to pass.
 */
export function decodeCursor(cursor: string, list: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.slice(CURSOR_PREFIX.length);
  if (!text.startsWith(CURSOR_PREFIX) || !JOB_ID_PATTERN.test(id)) throw new InvalidCursorError(cursor, list);
  return id;
}

/** What a paged list reads from its store. */
export interface IndexSource<Item> {
  /** Up to `count` ids, newest first, strictly older than `beforeId` when given. */
  indexPage(beforeId: string | null, count: number): Promise<string[]>;
  /** The item of each id, null when it is gone (expired). */
  items(ids: string[]): Promise<(Item | null)[]>;
  /** Forget ids whose item is gone. */
  drop(ids: string[]): Promise<void>;
}

export interface Page<Item> {
  items: Item[];
  nextCursor: string | null;
}

/**
 * One page of at most `limit` items that pass `keep`, newest first, after `cursor` (`list`: the
 * operation, named by an invalid cursor's problem). With a filter,
 * the index is read in batches and at most LIST_SCAN_BUDGET entries per request: a page may then be
 * short, with a cursor to continue from where the scan stopped.
 */
export async function pageOfIndex<Item>(
  source: IndexSource<Item>,
  query: { limit: number; cursor?: string; filtered: boolean; list: string },
  keep: (item: Item) => boolean,
): Promise<Page<Item>> {
  const { limit } = query;
  const before = query.cursor === undefined ? null : decodeCursor(query.cursor, query.list);
  const batchSize = query.filtered ? Math.max(100, 4 * limit) : limit + 1;
  const matches: Item[] = [];
  const matchIds: string[] = [];
  const gone: string[] = [];
  let lastSeen = before;
  let exhausted = false;
  let scanned = 0;
  while (matches.length <= limit && !exhausted && scanned < LIST_SCAN_BUDGET) {
    const ids = await source.indexPage(lastSeen, batchSize);
    exhausted = ids.length < batchSize;
    const items = await source.items(ids);
    for (let k = 0; k < ids.length && matches.length <= limit; k++) {
      lastSeen = ids[k];
      scanned++;
      const item = items[k];
      if (item === null) gone.push(ids[k]);
      else if (keep(item)) {
        matches.push(item);
        matchIds.push(ids[k]);
      }
    }
  }
  await source.drop(gone);
  if (matches.length > limit) return { items: matches.slice(0, limit), nextCursor: encodeCursor(matchIds[limit - 1]) };
  if (exhausted || lastSeen === null) return { items: matches, nextCursor: null };
  return { items: matches, nextCursor: encodeCursor(lastSeen) };
}

/** A `keep` filter of labels: every one of `wanted` ([key, value]) is among `labels`. */
export function hasLabels(labels: Labels, wanted: readonly [string, string][]): boolean {
  return wanted.every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value);
}
