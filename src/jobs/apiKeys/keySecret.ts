/**
 * Key secrets: 32 random bytes (256 bits), base64url, after a recognisable prefix (so a leaked key
 * is easy to find in logs and repositories), and their SHA-256, the only thing stored.
 *
 * A fast hash is enough: slow hashes (bcrypt, scrypt, argon2) protect low-entropy passwords against
 * guessing, but a 256-bit random secret cannot be guessed at any hash rate. An unsalted digest also
 * lets a request find its key with one lookup by digest.
 */
import { createHash, randomBytes } from 'node:crypto';

export const KEY_SECRET_PREFIX = 'lss_';
const SECRET_BYTES = 32;

export function newKeySecret(): string {
  return KEY_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

/** Hex SHA-256 of the secret as sent. */
export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The shape of a secret this service issues (anything else is refused without a lookup). */
export function looksLikeKeySecret(secret: string): boolean {
  return (
    secret.length === KEY_SECRET_PREFIX.length + 43 && secret.startsWith(KEY_SECRET_PREFIX) && /^[A-Za-z0-9_-]+$/.test(secret.slice(4))
  );
}
