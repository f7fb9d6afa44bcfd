import fs from 'node:fs';
import path from 'node:path';

/**
 * Environment for {@link startServiceProcess} that gives the service config keys no environment
 * variable reaches (e.g. `handlers`, whose module paths may be absolute): writes
 * `<dir>/service-config.json` with `overrides` and names it in `SCHEDULER_CONFIG`, on top of
 * `config/default.json` and `config/test.json` (`NODE_ENV=test`).
 */
export function serviceConfigEnv(dir: string, overrides: Record<string, unknown>): Record<string, string> {
  const file = path.join(dir, 'service-config.json');
  fs.writeFileSync(file, JSON.stringify(overrides, null, 2));
  return { NODE_ENV: 'test', SCHEDULER_CONFIG: file };
}
