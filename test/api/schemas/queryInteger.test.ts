/** A whole number in a query string: decimal digits only, its JSON Schema an integer with the inner schema's default. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { queryInteger } from '../../../src/api/schemas/queryInteger.js';

describe('queryInteger', () => {
  const query = z.object({ limit: queryInteger(z.number().int().min(1).max(200).default(20)) });

  it('reads decimal digits, takes the default when absent, and leaves the bounds to the inner schema', () => {
    expect(query.parse({ limit: '5' })).toEqual({ limit: 5 });
    expect(query.parse({ limit: '007' })).toEqual({ limit: 7 });
    expect(query.parse({})).toEqual({ limit: 20 });
    expect(query.safeParse({ limit: '0' }).error?.issues[0].code).toBe('too_small');
    expect(query.safeParse({ limit: '-3' }).error?.issues[0].code).toBe('too_small');
  });

  it('refuses what Number() would misread, naming what was written', () => {
    for (const written of ['0x1', '1e1', '0b1', ' 1', '1.0', '+1', '', 'Infinity']) {
      const issues = query.safeParse({ limit: written }).error?.issues;
      expect(issues?.[0].message, written).toContain(`received ${JSON.stringify(written)}`);
      expect(issues?.[0].path).toEqual(['limit']);
    }
  });

  it('describes an optional integer with its default in the document', () => {
    expect(z.toJSONSchema(query, { io: 'input' }).properties).toEqual({
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 20 },
    });
  });
});
