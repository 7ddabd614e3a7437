/**
 * The signature of a callback, against the Standard Webhooks reference library (`standardwebhooks`): a
 * `whsec_` secret, padded or not, keys the HMAC with the bytes it encodes, as their verifier reads it; any other
 * secret with its UTF-8 bytes.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signature, signingKey } from '../../../src/jobs/notify/deliver.js';

const body = JSON.stringify({ id: '01M7Z', status: 'succeeded' });
const headersOf = (secret: string, timestamp: number) => ({
  'webhook-id': 'msg_job_01M7Z',
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature(secret, 'msg_job_01M7Z', timestamp, body),
});

describe('callback signatures', () => {
  it.each([32, 24, 31])('a whsec_ secret of %i bytes, padded and unpadded, verifies with their library', (bytes) => {
    const key = randomBytes(bytes);
    const padded = `whsec_${key.toString('base64')}`;
    const unpadded = padded.replace(/=+$/, '');
    const now = Math.floor(Date.now() / 1000);
    for (const secret of [padded, unpadded]) {
      expect(signingKey(secret).equals(key), secret).toBe(true);
      expect(new Webhook(secret).verify(body, headersOf(secret, now))).toEqual(JSON.parse(body));
    }
  });

  it('any other secret keys the HMAC with its UTF-8 bytes (their library given those bytes in base64)', () => {
    const now = Math.floor(Date.now() / 1000);
    for (const secret of ['a-long-random-secret-string', 'sécret-ünïcode-🔑-0123', 'whsec_not base64!', 'whsec_abcde']) {
      expect(signingKey(secret).equals(Buffer.from(secret, 'utf8')), secret).toBe(true);
      expect(new Webhook(Buffer.from(secret, 'utf8').toString('base64')).verify(body, headersOf(secret, now))).toEqual(JSON.parse(body));
    }
  });
});
