/**
 * Job ids are ULIDs (26 characters of Crockford base32: 48 bits of milliseconds, then 80 random
 * bits): unguessable, URL-safe, and sorting them as strings sorts jobs by creation time.
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newJobId(now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += ALPHABET[bytes[i] % 32];
  return time + random;
}

export const JOB_ID_PATTERN = /^[0-9A-Za-z_-]{1,64}$/;
