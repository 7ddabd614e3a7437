/**
 * A worker stand-in for test/jobs/sandboxChild.test.ts: forks test/jobs/sandboxChildFixture.ts with the execArgv given
 * as JSON in argv[2], tells it to throw once orphaned, prints its pid, and waits to be killed.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';

const execArgv = JSON.parse(process.argv[2]) as string[];
const child = fork(new URL('./sandboxChildFixture.ts', import.meta.url).pathname, [], { execArgv, stdio: 'ignore' });
await once(child, 'message');
child.send('throw once orphaned');
process.stdout.write(`${child.pid}\n`);
setInterval(() => undefined, 1000);
