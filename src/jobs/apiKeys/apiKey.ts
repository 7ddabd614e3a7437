/**
 * API keys: who may call the service (AUTH_MODE=keys), whose jobs and matrices are whose, and each
 * key's limits. A key is shown once, when it is created; only its SHA-256 is stored.
 */

/** Per-key overrides of the configured limits; an absent field means the configuration's default. */
export interface KeyQuotas {
  /** Requests per second (RATE_LIMIT_PER_SECOND). */
  requestsPerSecond?: number;
  /** Jobs queued or running at once (MAX_ACTIVE_JOBS_PER_KEY). */
  activeJobs?: number;
  /** Bytes kept stored: matrices, job inputs, solutions, traces (MAX_STORED_BYTES_PER_KEY). */
  storedBytes?: number;
  /** Samples of one study (MAX_STUDY_SAMPLES_PER_KEY). */
  studySamples?: number;
}

export const KEY_QUOTA_NAMES = [
  'requestsPerSecond',
  'activeJobs',
  'storedBytes',
  'studySamples',
] as const satisfies readonly (keyof KeyQuotas)[];

/** A key as listed: everything but the secret, which is never stored. */
export interface ApiKey {
  id: string;
  name: string;
  /** Admin keys manage keys, see every tenant's jobs and matrices, and read /metrics and /admin/*. */
  admin: boolean;
  createdAt: string;
  /** The last request made with the key (null: never used). */
  lastUsedAt: string | null;
  /** Set once revoked: a revoked key is refused at once (every request looks the key up in Redis). */
  revokedAt: string | null;
  quotas: KeyQuotas;
}

/** The answer to a key's creation: the only time the secret is shown. */
export interface CreatedApiKey extends ApiKey {
  /** The bearer token: `Authorization: Bearer <key>`. */
  key: string;
}

export interface NewApiKey {
  name: string;
  admin?: boolean;
  quotas?: KeyQuotas;
}

/** The limits that apply to one key: its overrides over the configured defaults. */
export interface ResolvedQuotas {
  requestsPerSecond: number;
  activeJobs: number;
  storedBytes: number;
  studySamples: number;
}

/** The tenant a job or matrix is created for: its owner (a key id) and the limits it must stay within. */
export interface Tenant {
  owner: string;
  quotas: ResolvedQuotas;
}

export interface ApiKeyService {
  create(request: NewApiKey): Promise<CreatedApiKey>;
  /** Every key, revoked ones included, oldest first. */
  list(): Promise<ApiKey[]>;
  /** Throws ApiKeyNotFoundError. */
  get(id: string): Promise<ApiKey>;
  /** Revoked at once for every API instance; revoking twice is harmless. Throws ApiKeyNotFoundError. */
  revoke(id: string): Promise<ApiKey>;
  /** The live (not revoked) key with this secret, its last use recorded; null for an unknown or revoked one. */
  authenticate(secret: string): Promise<ApiKey | null>;
  /** Whether a live admin key exists (AUTH_MODE=keys refuses to start without one). */
  hasAdmin(): Promise<boolean>;
}

/** The configured defaults a key's quotas override. */
export interface QuotaDefaults {
  RATE_LIMIT_PER_SECOND: number;
  MAX_ACTIVE_JOBS_PER_KEY: number;
  MAX_STORED_BYTES_PER_KEY: number;
  MAX_STUDY_SAMPLES_PER_KEY: number;
}

export function resolveQuotas(quotas: KeyQuotas, defaults: QuotaDefaults): ResolvedQuotas {
  return {
    requestsPerSecond: quotas.requestsPerSecond ?? defaults.RATE_LIMIT_PER_SECOND,
    activeJobs: quotas.activeJobs ?? defaults.MAX_ACTIVE_JOBS_PER_KEY,
    storedBytes: quotas.storedBytes ?? defaults.MAX_STORED_BYTES_PER_KEY,
    studySamples: quotas.studySamples ?? defaults.MAX_STUDY_SAMPLES_PER_KEY,
  };
}
