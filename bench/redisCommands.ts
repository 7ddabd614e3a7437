import { Redis } from 'ioredis';

/** Redis's calls of each command so far (INFO commandstats; a Lua script's own calls are counted too). */
export async function commandCalls(url: string): Promise<Map<string, number>> {
  const redis = new Redis(url);
  try {
    const info = await redis.info('commandstats');
    return new Map([...info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map((m) => [m[1], Number(m[2])]));
  } finally {
    redis.disconnect();
  }
}

/** Each command's calls a job between two readings (those of at least 0.01 a job, most first). */
export function commandsPerJob(before: Map<string, number>, after: Map<string, number>, jobs: number): Record<string, number> {
  return Object.fromEntries(
    [...after]
      .map(([name, calls]) => [name, (calls - (before.get(name) ?? 0)) / jobs] as const)
      .filter(([, perJob]) => perJob >= 0.01)
      .sort((a, b) => b[1] - a[1]),
  );
}

/** "Redis commands per job: 82.1 (expire 10.00, ...)". */
export function commandsLine(perJob: Record<string, number>): string {
  const total = Object.values(perJob).reduce((s, x) => s + x, 0);
  const each = Object.entries(perJob)
    .map(([name, calls]) => `${name} ${calls.toFixed(2)}`)
    .join(', ');
  return `Redis commands per job: ${total.toFixed(1)} (${each})`;
}
