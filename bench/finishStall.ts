/**
 * What a job's end costs Redis when its result is large: the finish script (scripts.lssFinish: the result written,
 * the document's status message published) run on a private redis-server with a 14.5 MB result (the size of a
 * finished advise job's at n = 10^6, m = 100: five candidates' assignments), while another client pings in a loop.
 * Reports per round the script's time as the caller saw it, Redis' own (SLOWLOG, microseconds), the longest a ping
 * waited meanwhile (every other client stalls as long), and how long a subscriber took to parse the message.
 *
 *   node --import tsx bench/finishStall.ts [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import { defineScripts, runScript } from '../src/jobs/store/scripts.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const redis = await startEmbeddedRedis({});
const writer = new Redis(redis.url);
const subscriber = new Redis(redis.url);
const pinger = new Redis(redis.url);
defineScripts(writer);
await subscriber.subscribe('status');
const last = { parseMs: 0 };
subscriber.on('message', (_channel: string, message: string) => {
  const t = performance.now();
  JSON.parse(message);
  last.parseMs = performance.now() - t;
});
const assignments = Array.from({ length: 5e6 }, (_, k) => k % 100);
const result = JSON.stringify({ analysisCompleted: true, advice: { candidates: [assignments] } });
try {
  for (let round = 0; round < Number(args.rounds); round++) {
    const doc = `job:${round}`;
    await writer.hset(doc, 'status', 'running', 'id', `${round}`);
    await writer.call('SLOWLOG', 'RESET');
    last.parseMs = 0;
    let maxPingMs = 0;
    let stop = false;
    const pings = (async () => {
      while (!stop) {
        const t = performance.now();
        await pinger.ping();
        maxPingMs = Math.max(maxPingMs, performance.now() - t);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const t = performance.now();
    const args = ['status', 'succeeded', new Date().toISOString(), 60, result, '', '', 'outbox', `${round}`];
    await runScript(writer, 'lssFinish', [doc], args);
    const finishMs = performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop = true;
    await pings;
    const slowest = (await writer.call('SLOWLOG', 'GET', '1')) as unknown[][];
    const report = {
      resultMB: result.length / 1e6,
      finishMs,
      redisUs: slowest[0]?.[2] ?? null,
      maxPingMs,
      subscriberParseMs: last.parseMs,
    };
    process.stdout.write(`${JSON.stringify(report, (_key, value: unknown) => (typeof value === 'number' ? +value.toFixed(1) : value))}\n`);
  }
} finally {
  writer.disconnect();
  subscriber.disconnect();
  pinger.disconnect();
  await redis.stop();
}
