import fs from 'node:fs';
import path from 'node:path';

/** The service's config folder (`loadConfig` reads `<package root>/config`). */
const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? merge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

/**
 * Environment for {@link startServiceProcess} that gives the service config keys no environment
 * variable reaches (e.g. `handlers`, whose module paths may be absolute), without writing into the
 * repository's `config/` folder.
 *
 * Writes `<dir>/service-config.json` = `config/test.json` (what `NODE_ENV=test` would load) merged
 * with `overrides`, and returns `NODE_ENV` as that file's path relative to `config/` without
 * `.json`: `loadConfig` reads `path.join(configDir, NODE_ENV + '.json')`, so the service loads
 * `config/default.json` and then this file. Environment variables still win over both.
 */
export function serviceConfigEnv(dir: string, overrides: Record<string, unknown>): Record<string, string> {
  const testJson = path.join(CONFIG_DIR, 'test.json');
  const base = fs.existsSync(testJson) ? (JSON.parse(fs.readFileSync(testJson, 'utf8')) as Record<string, unknown>) : {};
  const file = path.join(dir, 'service-config.json');
  fs.writeFileSync(file, JSON.stringify(merge(base, overrides), null, 2));
  const nodeEnv = path.relative(CONFIG_DIR, file).replace(/\.json$/, '');
  if (path.join(CONFIG_DIR, `${nodeEnv}.json`) !== file) throw new Error(`cannot reach ${file} from ${CONFIG_DIR} through NODE_ENV`);
  return { NODE_ENV: nodeEnv };
}
