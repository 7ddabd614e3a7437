/** The job layer's one way to run a Redis pipeline or MULTI (the job store's and the matrix store's). */
import type { ChainableCommander } from 'ioredis';

/** exec() of a pipeline or MULTI, throwing the first command error instead of returning it. */
export async function execOrThrow(batch: ChainableCommander): Promise<unknown[]> {
  const replies = await batch.exec();
  if (replies === null) throw new Error('Redis transaction aborted');
  return replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
