/** Starting a worker process (src/jobs/worker.ts through src/jobs/workerMain.ts). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runWorkerMain(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/jobs/workerMain.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`workerMain still running after 20 s; stderr: ${stderr}`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('a worker process', () => {
  it('refuses to start when NUMERIC_BACKEND=native and the addon cannot load, naming why (instead of failing every job)', async () => {
    // Nothing listens on port 9: the check must come before any Redis connection.
    const { code, stderr } = await runWorkerMain({
      NUMERIC_BACKEND: 'native',
      LINALG_NATIVE_ADDON: 'off',
      REDIS_URL: 'redis://127.0.0.1:9',
      LOG_LEVEL: 'silent',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /ConfigError: NUMERIC_BACKEND=native, but the native numerical backend is not available: LINALG_NATIVE_ADDON=off/,
    );
  });
});
