/**
 * What jobs and studies keep of their callbacks, in the same form for both: the target (url and
 * secret, a hash of its own that only the delivery reads) and the attempts listed on the document.
 */
import type { Redis } from 'ioredis';
import type { WebhookDelivery, WebhookTarget } from '../types.js';

/** The callback stored under `notifyKey`; null when none was asked for or it is gone. */
export async function readWebhookTarget(redis: Redis, notifyKey: string): Promise<WebhookTarget | null> {
  const [url, secret] = await redis.hmget(notifyKey, 'url', 'secret');
  return url && secret ? { url, secret } : null;
}

/**
 * Appends an attempt to the document's `deliveries` (the last `keep`), unless the document is gone.
 * Read, then written: one delivery job per job or study at a time writes it.
 */
export async function appendDelivery(redis: Redis, docKey: string, delivery: WebhookDelivery, keep: number): Promise<void> {
  const listed = JSON.parse((await redis.hget(docKey, 'deliveries')) ?? '[]') as WebhookDelivery[];
  const deliveries = JSON.stringify([...listed, delivery].slice(-keep));
  await redis.eval(
    "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'deliveries', ARGV[1]) end",
    1,
    docKey,
    deliveries,
  );
}
