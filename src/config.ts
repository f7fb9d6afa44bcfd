/**
 * Loading the configuration: `config/default.json`, `config/<NODE_ENV>.json`, the file named by
 * `SCHEDULER_CONFIG`, environment variables and overrides, merged in that order and checked against
 * the schema (config-schema.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { StartupError } from './domain/startup-error';
import { streamQueueNames } from './domain/external-queues';
import { limitableTaskTypes } from './handlers/registry';
import { Config, ConfigSchema } from './config-schema';

export type { Config } from './config-schema';

/** Environment variable → config key (docs/DESIGN.md §11). */
const ENV_KEYS: Record<string, keyof z.infer<typeof ConfigSchema>> = {
  PORT: 'port',
  HOST: 'host',
  SCHEDULER_STORE: 'store',
  SQLITE_PATH: 'sqlitePath',
  SQLITE_CREATE_DIR: 'sqliteCreateDir',
  MONGODB_URI: 'mongodbUri',
  POSTGRES_URL: 'postgresUrl',
  POSTGRES_SCHEMA: 'postgresSchema',
  REDIS_URL: 'redisUrl',
  WORKERS: 'workers',
  WORKER_CONCURRENCY: 'workerConcurrency',
  PARTITIONS: 'partitions',
  LOG_LEVEL: 'logLevel',
  OTEL_TRACES_EXPORTER: 'tracesExporter',
  OTEL_BSP_SCHEDULE_DELAY: 'tracesExportDelayMs',
  ALLOW_UNAUTHENTICATED: 'allowUnauthenticated',
  LEASE_TTL_MS: 'leaseTtlMs',
  MEMBER_ID: 'memberId',
  WORKER_POOLS: 'workerPools',
  CLAIM_AHEAD_MS: 'claimAheadMs',
};

/** Environment variable → nested config key (`overflow.enabled`). */
const ENV_NESTED_KEYS: Record<string, [string, string]> = {
  OVERFLOW_ENABLED: ['overflow', 'enabled'],
  TLS_CERT_FILE: ['tls', 'certFile'],
  TLS_KEY_FILE: ['tls', 'keyFile'],
  TLS_CA_FILE: ['tls', 'caFile'],
};

/** The `sqlitePath` of `config/default.json`: its directory (`./data`) is created when missing unless `sqliteCreateDir` is false. */
export const DEFAULT_SQLITE_PATH = './data/scheduler.db';

/** Whether start-up may create the SQLite file's missing directory (see `sqliteCreateDir`). */
export function mayCreateSqliteDir(config: Pick<Config, 'sqlitePath' | 'sqliteCreateDir'>): boolean {
  return config.sqliteCreateDir ?? config.sqlitePath === DEFAULT_SQLITE_PATH;
}

/** Thrown when configuration is invalid; the message is one line naming the key. */
export class ConfigError extends StartupError {}

/**
 * The JSON object in `file` ({} when there is no file).
 * @throws ConfigError when it is not valid JSON, or its top level is not an object (`null`, `42`,
 *   `[]`, a string: each would be a setting of nothing, or crash the merge)
 */
function readJson(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new ConfigError(`config file ${file} must hold a JSON object of settings ({"key": value, …}), not ${got}`);
  }
  return value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The path of the first `__proto__` key in `value` (at any depth, in objects and arrays), or null.
 * JSON.parse keeps such a key as an own property, but no configuration object can: assigning it
 * sets the object's prototype (a plain value is ignored), and zod's records skip it, so its value
 * would be dropped without a word, and the schema's "unknown keys refused" would never see it.
 */
function protoKeyPath(value: unknown, at: string[] = []): string | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const [k, v] of Object.entries(value)) {
    const here = [...at, k];
    if (k === '__proto__') return here.join('.');
    const found = protoKeyPath(v, here);
    if (found !== null) return found;
  }
  return null;
}

/** Merges `over` into a copy of `base`, plain objects key by key. Neither holds a `__proto__` key (`protoKeyPath`, checked for every layer). */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? merge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (isPlainObject(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Loads `config/default.json`, then `config/<NODE_ENV>.json`, then the JSON file named by
 * `SCHEDULER_CONFIG` (e.g. an operator's `handlers` map, outside the package), then environment
 * variables, then `overrides` (for tests), validates the result and returns it deep-frozen, with
 * `handlerDirs`: the folder of the file each `handlers` entry came from (the working directory for
 * `overrides`; no environment variable sets `handlers`).
 * `NODE_ENV` must be a plain name (letters, digits, `-`, `_`), never a path.
 * @param options.configDir folder with the JSON files (default: `<package root>/config`)
 * @param options.env environment to read (default: process.env)
 * @throws ConfigError naming the first invalid key
 */
export function loadConfig(options: { configDir?: string; env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown> } = {}): Config {
  const env = options.env ?? process.env;
  const dir = path.resolve(options.configDir ?? path.resolve(__dirname, '..', '..', 'config'));
  // Each handler module path is resolved against the folder of the last layer that named its type.
  const handlerDirs: Record<string, string> = {};
  const layer = (over: Record<string, unknown>, from: string, source: string) => {
    const proto = protoKeyPath(over);
    if (proto !== null)
      throw new ConfigError(
        `invalid configuration: ${proto} (in ${source}): unknown key ("__proto__" cannot be a key of the configuration, not even a task type or queue name)`,
      );
    if (isPlainObject(over.handlers)) for (const t of Object.keys(over.handlers)) handlerDirs[t] = from;
    return over;
  };
  const defaults = path.join(dir, 'default.json');
  let raw = layer(readJson(defaults), dir, defaults);
  if (env.NODE_ENV) {
    if (!/^[A-Za-z0-9_-]+$/.test(env.NODE_ENV))
      throw new ConfigError(`invalid configuration: NODE_ENV "${env.NODE_ENV}" must be a plain name`);
    const file = path.join(dir, `${env.NODE_ENV}.json`);
    raw = merge(raw, layer(readJson(file), dir, file));
  }
  if (env.SCHEDULER_CONFIG) {
    if (!fs.existsSync(env.SCHEDULER_CONFIG))
      throw new ConfigError(`invalid configuration: SCHEDULER_CONFIG: no file ${env.SCHEDULER_CONFIG}`);
    raw = merge(raw, layer(readJson(env.SCHEDULER_CONFIG), path.dirname(path.resolve(env.SCHEDULER_CONFIG)), env.SCHEDULER_CONFIG));
  }
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const [name, [outer, inner]] of Object.entries(ENV_NESTED_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[outer] = { ...(isPlainObject(raw[outer]) ? raw[outer] : {}), [inner]: value };
  }
  if (options.overrides) raw = merge(raw, layer(options.overrides, process.cwd(), 'overrides'));
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue.path.join('.') || '(root)';
    const envName =
      Object.entries(ENV_KEYS).find(([, k]) => k === issue.path[0])?.[0] ??
      Object.entries(ENV_NESTED_KEYS).find(([, [o, i]]) => o === issue.path[0] && i === issue.path[1])?.[0];
    throw new ConfigError(`invalid configuration: ${key}${envName ? ` (env ${envName})` : ''}: ${issue.message}`);
  }
  checkExternalQueues(parsed.data);
  checkRateLimitTypes(parsed.data);
  checkWorkerPoolTypes(parsed.data);
  const dirs = Object.fromEntries(Object.keys(parsed.data.handlers).map((t) => [t, handlerDirs[t] ?? process.cwd()]));
  return deepFreeze({ ...parsed.data, handlerDirs: dirs });
}

/**
 * A `rateLimits` entry for a task type no handler serves would never apply (a misspelt type is
 * silent): refused by the rule of `PUT /api/v1/rate-limits/{type}` (`limitableTaskTypes`).
 * @throws ConfigError naming `rateLimits.<type>` and the registered types
 */
export function checkRateLimitTypes(config: Pick<Config, 'rateLimits' | 'handlers' | 'externalQueues'>): void {
  const types = limitableTaskTypes(config);
  const unknown = types && Object.keys(config.rateLimits).find((t) => !types.includes(t));
  if (types && unknown !== undefined)
    throw new ConfigError(
      `invalid configuration: rateLimits.${unknown}: no handler serves task type ${JSON.stringify(unknown)} (registered: ${types.join(', ')}; add it to handlers, or fix the name)`,
    );
}

/**
 * A `workerPools` entry pinning a task type no handler serves would never run anything (a misspelt
 * type is silent): refused by the rule of `rateLimits.<type>` (`limitableTaskTypes`: any type when
 * external queues are configured, whose consumers may serve types no handler here does).
 * @throws ConfigError naming `workerPools.<i>.taskTypes.<j>`, the type and the registered types
 */
export function checkWorkerPoolTypes(config: Pick<Config, 'workerPools' | 'handlers' | 'externalQueues'>): void {
  const types = limitableTaskTypes(config);
  if (types === null) return;
  config.workerPools.forEach((pool, i) => {
    const j = pool.taskTypes.findIndex((t) => !types.includes(t));
    if (j === -1) return;
    throw new ConfigError(
      `invalid configuration: workerPools.${i}.taskTypes.${j} (env WORKER_POOLS): no handler serves task type ${JSON.stringify(pool.taskTypes[j])} (registered: ${types.join(', ')}; add it to handlers, or fix the name)`,
    );
  });
}

/**
 * External queues of the `stream` transport (the default) are Redis streams: they need `redisUrl`.
 * Pull queues (`transport: "http"`) need nothing more.
 * @throws ConfigError naming `externalQueues` when stream queues are configured without `redisUrl`
 */
export function checkExternalQueues(config: Pick<Config, 'externalQueues' | 'redisUrl'>): void {
  const names = streamQueueNames(config.externalQueues);
  if (names.length > 0 && (config.redisUrl === null || config.redisUrl.trim() === '')) {
    throw new ConfigError(
      `invalid configuration: externalQueues (${names.join(', ')}) needs redisUrl (env REDIS_URL): external queues are Redis streams`,
    );
  }
}
