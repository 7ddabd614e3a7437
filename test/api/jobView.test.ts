/**
 * src/api/jobView.ts on a fastify app of its own (inject): a partition's assignment is written by a join after the
 * route's serializer has checked the rest, and goes through the serializer whole when that serializer does not write
 * the assignment last; a job's stored result is spliced in as its text.
 */
import Fastify, { type FastifyReply } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sendJobView, sendPartition } from '../../src/api/jobView.js';
import { jsonResponse } from '../../src/api/schemas/responses.js';
import { JobPartitionSchema } from '../../src/api/schemas/job.js';
import type { Job, JobPartition } from '../../src/jobs/types.js';

const partition: JobPartition = { id: 'p', n: 5, m: 2, sizes: [3, 2], assignment: Int32Array.from([0, 1, 0, 1, 0]) };

async function appServing(schema: z.ZodType, send: (reply: FastifyReply) => unknown) {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.get('/', { schema: { response: { 200: jsonResponse('it', schema) } } }, (_request, reply) => send(reply));
  await app.ready();
  return app;
}

describe('sendPartition', () => {
  it('writes the assignment by a join, after the checked fields, as the schema has it', async () => {
    const app = await appServing(JobPartitionSchema, (reply) => sendPartition(reply, partition));
    const response = await app.inject({ url: '/' });
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toBe('{"id":"p","n":5,"m":2,"sizes":[3,2],"assignment":[0,1,0,1,0]}');
    await app.close();
  });

  it('goes through the serializer whole when it does not write the assignment last', async () => {
    const assignmentFirst = z.object({
      assignment: z.array(z.number().int()),
      id: z.string(),
      n: z.number(),
      m: z.number(),
      sizes: z.array(z.number()),
    });
    const app = await appServing(assignmentFirst, (reply) => sendPartition(reply, partition));
    const response = await app.inject({ url: '/' });
    expect(JSON.parse(response.body)).toEqual({ id: 'p', n: 5, m: 2, sizes: [3, 2], assignment: [0, 1, 0, 1, 0] });
    expect(response.body.startsWith('{"assignment":[0,1,0,1,0],')).toBe(true);
    await app.close();
  });
});

describe('sendJobView', () => {
  it('splices the stored result in as its text, after the fields the serializer wrote', async () => {
    const schema = z.object({ id: z.string(), result: z.object({ analysisCompleted: z.boolean() }).optional() });
    const job = { id: 'j' } as unknown as Job;
    const stored = '{"analysisCompleted":true,"runs":{}}';
    const app = await appServing(schema, (reply) => sendJobView(reply, { job, resultJson: stored }));
    expect((await app.inject({ url: '/' })).body).toBe(`{"id":"j","result":${stored}}`);
    await app.close();
  });
});
