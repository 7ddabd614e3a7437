/**
 * A job document as the API writes it at creation (JobStore.create), for the store tests: an analyze
 * job on a 2 x 2 dense matrix held by one machine, each test overriding what it is about.
 */
import { newJobId } from '../../src/jobs/jobId.js';
import type { NewDocument } from '../../src/jobs/store/jobDocument.js';

export function newJobDocument(fields: Partial<NewDocument> = {}): NewDocument {
  return {
    id: newJobId(),
    type: 'analyze',
    n: 2,
    m: 1,
    algorithms: [],
    options: { tolerance: 1e-9, maxIterations: 50, parameters: {} },
    input: { format: 'dense' },
    hasRhs: false,
    storage: 'dense',
    createdAt: new Date().toISOString(),
    partition: { kind: 'machines', m: 1, sizes: [2] },
    labels: {},
    digest: null,
    ...fields,
  };
}
