import fs from 'node:fs';
import path from 'node:path';

/**
 * The package version from the nearest `package.json` above this file (`src/` in the sources,
 * `dist/src/` once compiled); `"0.0.0"` when none is found. Read on each call: no cached state.
 */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string };
      if (pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}
