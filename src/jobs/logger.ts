/** One pino configuration for every process of the service (JSON lines on stdout). */
import { pino, type Logger } from 'pino';
import type { Config } from '../config.js';

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level: config.LOG_LEVEL, base: { pid: process.pid, ...bindings } });
}
