/**
 * A job sent as its document is stored: the job through the route's own serializer (zod checks it against the
 * route's 200 application/json schema), its stored result spliced in as the JSON text it is. A finished advise job's
 * result at n = 10^6 is ~15 MB of assignments: parsing it, checking it with zod and writing zod's copy took 2 s of the
 * API's CPU a read. The result's text was written by JobStore.finish from a JobResult; the contract tests check every
 * body received, result included, against the OpenAPI document.
 */
import type { FastifyReply } from 'fastify';
import type { Job, JobView } from '../jobs/types.js';

/** What a route answering a Job returns: the job itself (serialized as usual) or the reply already sent. */
export function sendJobView(reply: FastifyReply, { job, resultJson }: JobView): Job | FastifyReply {
  if (resultJson === undefined) return job;
  const serialize = reply.getSerializationFunction('200', 'application/json');
  const text = serialize ? serialize(job as unknown as Record<string, unknown>) : JSON.stringify(job);
  // `text` is a JSON object: the result goes in as its last member.
  return reply.type('application/json; charset=utf-8').send(`${text.slice(0, -1)},"result":${resultJson}}`);
}
