/**
 * The shard implementations a worker thread can build, by kind. Loaded on demand so that this
 * module (imported by ./worker.ts) does not import the algorithm modules at start-up.
 */
import type { Shard, ShardKind } from './protocol.js';

export type ShardConstructor = new (spec: never, n: number) => Shard;

export async function loadShardConstructor(kind: ShardKind): Promise<new (spec: unknown, n: number) => Shard> {
  let construct: ShardConstructor;
  switch (kind) {
    case 'consensus':
      construct = (await import('../algorithms/apc.js')).ConsensusShard;
      break;
    case 'cimmino':
      construct = (await import('../algorithms/cimmino.js')).CimminoShard;
      break;
    case 'gradient':
      construct = (await import('../algorithms/gradientPass.js')).GradientShard;
      break;
    default:
      throw new Error(`Unknown shard kind ${String(kind)}`);
  }
  return construct as new (spec: unknown, n: number) => Shard;
}
