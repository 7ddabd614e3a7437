/**
 * The opaque `cursor` of GET /v1/jobs and GET /v1/studies: the id of the last job (or study) a page
 * covered (the index is ordered by id, and ULIDs sort by creation time), versioned and base64url-encoded.
 */
import { InvalidCursorError } from '../errors.js';
import { JOB_ID_PATTERN } from '../jobId.js';

const CURSOR_PREFIX = 'j1:';

export function encodeCursor(id: string): string {
  return Buffer.from(CURSOR_PREFIX + id, 'utf8').toString('base64url');
}

/**
 * The id a cursor continues after; throws InvalidCursorError for anything this service did not
 * issue, naming `list`, the operation whose `nextCursor` to pass.
 */
export function decodeCursor(cursor: string, list = 'GET /v1/jobs'): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.slice(CURSOR_PREFIX.length);
  if (!text.startsWith(CURSOR_PREFIX) || !JOB_ID_PATTERN.test(id)) throw new InvalidCursorError(cursor, list);
  return id;
}
