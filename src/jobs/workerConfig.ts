/**
 * The worker process hands its (already validated) Config to its sandboxed children through one
 * environment variable, so a child needs no configuration of its own.
 */
export const WORKER_CONFIG_ENV = 'LSS_WORKER_CONFIG';
