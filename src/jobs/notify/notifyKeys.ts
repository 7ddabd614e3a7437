/**
 * The callbacks' Redis names: the outbox the end-of-life scripts of jobs and studies push to
 * (`job:<id>`, `study:<id>`), and the BullMQ queue of the deliveries, `<QUEUE_NAME>-notify`.
 */
export type NotifiedKind = 'job' | 'study';

export function notifyOutboxKey(keyPrefix: string): string {
  return `${keyPrefix}:notify:outbox`;
}

/** The outbox entries being moved into the queue (put back in the outbox when a worker starts). */
export function notifyInflightKey(keyPrefix: string): string {
  return `${keyPrefix}:notify:inflight`;
}

export function outboxMember(kind: NotifiedKind, id: string): string {
  return `${kind}:${id}`;
}

export function notifyQueueName(config: { QUEUE_NAME: string }): string {
  return `${config.QUEUE_NAME}-notify`;
}
