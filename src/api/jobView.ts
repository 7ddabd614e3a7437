/**
 * A job sent as its document is stored: GET /v1/jobs/{id} sends the job through the route's own serializer (zod checks
 * it against the route's 200 application/json schema), a job's event stream as JSON (as every event); either way its
 * stored result is spliced in as the JSON text it is. A finished advise job's result at n = 10^6 is ~15 MB of
 * assignments: parsing it, checking it with zod and writing zod's copy took 2 s of the API's CPU a read. The result's
 * text was written by JobStore.finish from a JobResult; the contract tests check every body received, result
 * included, against the OpenAPI document.
 */
import type { FastifyReply } from 'fastify';
import { assignmentList } from '../solvers/problem.js';
import type { Job, JobEvent, JobPartition, JobView } from '../jobs/types.js';

/** A job's JSON (an object) with `result` added as its last member, the stored text as it is. */
function withResult(jobJson: string, resultJson: string): string {
  return `${jobJson.slice(0, -1)},"result":${resultJson}}`;
}

/** The `data` line of a job event: `{ status, job }`, the job's stored result spliced in (not parsed and written again). */
export function jobEventData(event: JobEvent): string {
  if (event.event !== 'status' || event.resultJson === undefined) return JSON.stringify(event.data);
  return `{"status":${JSON.stringify(event.data.status)},"job":${withResult(JSON.stringify(event.data.job), event.resultJson)}}`;
}

/** What a route answering a Job returns: the job itself (serialized as usual) or the reply already sent. */
export function sendJobView(reply: FastifyReply, { job, resultJson }: JobView): Job | FastifyReply {
  if (resultJson === undefined) return job;
  const serialize = reply.getSerializationFunction('200', 'application/json');
  const text = serialize ? serialize(job as unknown as Record<string, unknown>) : JSON.stringify(job);
  return reply.type('application/json; charset=utf-8').send(withResult(text, resultJson));
}

/**
 * GET /v1/jobs/{id}/partition: the job's partition, its assignment (10^6 integers at scale) written by a join after the
 * route's serializer has checked the rest; zod's check of each integer and the stringify of its copy took ~70-100 ms
 * at n = 10^6, the join ~8 ms. The serializer writes the schema's fields in order, the assignment last; should that
 * change, the partition goes through it whole.
 */
export function sendPartition(
  reply: FastifyReply,
  partition: JobPartition,
): FastifyReply | (Omit<JobPartition, 'assignment'> & { assignment: number[] }) {
  const serialize = reply.getSerializationFunction('200', 'application/json');
  const text = serialize?.({ ...partition, assignment: [] });
  const tail = '"assignment":[]}';
  if (text === undefined || !text.endsWith(tail)) return { ...partition, assignment: assignmentList(partition.assignment) };
  return reply
    .type('application/json; charset=utf-8')
    .send(`${text.slice(0, -tail.length)}"assignment":[${partition.assignment.join(',')}]}`);
}
