/**
 * Success answers as route schemas declare them: given by media type with a description, so that
 * every response of the OpenAPI document says what it is (a bare schema would be documented as
 * "Default Response"). Problem answers: ./problem.ts.
 */
import type { z } from 'zod';

/** An `application/json` answer whose body is `schema`. */
export function jsonResponse<T extends z.ZodType>(
  description: string,
  schema: T,
): { description: string; content: { 'application/json': { schema: T } } } {
  return { description, content: { 'application/json': { schema } } };
}
