/**
 * One callback attempt: a POST of the summary, signed as Standard Webhooks specify (headers
 * `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">`, keyed with the secret's bytes: signingKey). The host is resolved once
 * (dns.lookup) and its addresses checked (./addressPolicy.ts); the connection goes to the address
 * checked, not to a second resolution (DNS rebinding). Redirects are not followed: a 3xx is a failed
 * attempt, as is any answer other than 2xx, a connection error or no answer within the timeout.
 */
import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { refusal } from './addressPolicy.js';

export interface DeliveryRequest {
  url: string;
  secret: string;
  /** `webhook-id`: the same for every attempt of one message (receivers drop repeats by it). */
  messageId: string;
  body: string;
}

export interface DeliveryPolicy {
  allowedHosts: readonly string[];
  timeoutMs: number;
}

/** `refused`: the address policy said no (retrying will not help). */
export type AttemptOutcome =
  { delivered: true; statusCode: number } | { delivered: false; statusCode: number | null; error: string; refused: boolean };

/** Standard Webhooks' secrets: `whsec_` and the key's bytes in base64, padded or not (their libraries read both). */
const STANDARD_SECRET = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?)$/;

/**
 * The HMAC key of a secret: a Standard Webhooks secret (`whsec_<base64>`) is its decoded bytes, as their libraries
 * read it (`new Webhook(secret)` verifies what is signed here); any other is its UTF-8 bytes.
 */
export function signingKey(secret: string): Buffer {
  const encoded = STANDARD_SECRET.exec(secret)?.[1];
  return encoded ? Buffer.from(encoded, 'base64') : Buffer.from(secret, 'utf8');
}

export function signature(secret: string, messageId: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
}

export async function deliver(message: DeliveryRequest, policy: DeliveryPolicy): Promise<AttemptOutcome> {
  const url = new URL(message.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { delivered: false, statusCode: null, error: `refused: ${url.protocol} is not http or https`, refused: true };
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch (error) {
    return { delivered: false, statusCode: null, error: `cannot resolve ${host}: ${(error as Error).message}`, refused: false };
  }
  const refused = refusal(
    policy.allowedHosts,
    host,
    addresses.map((a) => a.address),
  );
  if (refused !== null || addresses.length === 0) {
    return { delivered: false, statusCode: null, error: refused ?? `${host} has no address`, refused: true };
  }
  const [chosen] = addresses;
  // The connection goes to the address just checked (the host name stays for TLS and the Host header).
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [chosen]);
    else callback(null, chosen.address, chosen.family);
  };
  const timestamp = Math.floor(Date.now() / 1000);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<AttemptOutcome>((resolve) => {
    const request = send(
      url,
      {
        method: 'POST',
        lookup: pinned,
        timeout: policy.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(message.body),
          'user-agent': 'linear-systems-service-webhooks',
          'webhook-id': message.messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature(message.secret, message.messageId, timestamp, message.body),
        },
      },
      (response: IncomingMessage) => {
        const statusCode = response.statusCode ?? 0;
        // The answer's body is not needed: read and dropped, so that the connection closes cleanly.
        response.resume();
        response.on('error', () => undefined);
        clearTimeout(overall);
        if (statusCode >= 200 && statusCode < 300) resolve({ delivered: true, statusCode });
        else {
          const why = statusCode >= 300 && statusCode < 400 ? `a redirect (${statusCode}), not followed` : `HTTP ${statusCode}`;
          resolve({ delivered: false, statusCode, error: `the receiver answered ${why}`, refused: false });
        }
      },
    );
    // The whole attempt, connection to answer, within the timeout (the socket's own timeout is for idleness).
    const overall = setTimeout(() => request.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    request.on('timeout', () => request.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)));
    request.on('error', (error) => {
      clearTimeout(overall);
      // OpenSSL's messages end in a newline.
      resolve({ delivered: false, statusCode: null, error: error.message.trim(), refused: false });
    });
    request.end(message.body);
  });
}
