/**
 * A whole number given in a query string. zod's `coerce` reads it with Number(), which also takes "0x1", "1e0", " 1 "
 * and "0b1": a typo's misreading is then served as if asked for. Only decimal digits are read here; anything else is a
 * 400 naming the parameter. The JSON Schema (and so the OpenAPI document and its clients) is `inner`'s: an integer,
 * with its default when `inner` has one (a default outside the preprocess would not reach the document).
 */
import { z } from 'zod';

const DECIMAL_DIGITS = /^-?[0-9]+$/;

export function queryInteger<Inner extends z.ZodType<number | undefined>>(inner: Inner) {
  return z.preprocess((value, context) => {
    if (typeof value !== 'string') return value;
    if (DECIMAL_DIGITS.test(value)) return Number(value);
    context.issues.push({
      code: 'custom',
      message: `expected a whole number in decimal digits, received ${JSON.stringify(value)}`,
      input: value,
    });
    return z.NEVER;
  }, inner);
}
