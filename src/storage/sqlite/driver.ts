import type BetterSqlite3 from 'better-sqlite3';
import { StartupError } from '../../domain/startup-error';

/**
 * The better-sqlite3 this Node.js runs: 13 (a Node-API addon, the package alias
 * `better-sqlite3-napi`) on Node 22 and later, 12 on Node 20, which 13 does not support (its
 * `engines` says >= 22; loaded on Node 20 it crashes the process).
 *
 * Why two: better-sqlite3 12 derives its statements from `node::ObjectWrap`, whose destructor
 * since Node 24.19 removes an environment cleanup hook and aborts the process (`Assertion failed:
 * (env) != nullptr` in `Statement::~Statement`) when a garbage collection finalizes one outside a
 * JavaScript context; 13 moved to node-addon-api (WiseLibs/better-sqlite3, the 13.0 release).
 * Their JavaScript API is the same for everything the store uses (`prepare`, `transaction`,
 * `pragma`, `backup`, `function`, `SqliteError` and its `code`), so the types are 12's.
 * @param nodeVersion `process.versions.node` (given in tests)
 * @returns the package name to `require`
 */
export function sqliteDriverPackage(nodeVersion: string = process.versions.node): 'better-sqlite3' | 'better-sqlite3-napi' {
  return Number(nodeVersion.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
}

/**
 * The `Database` class of {@link sqliteDriverPackage}'s better-sqlite3 (Node caches the module:
 * loaded on the first call).
 * @param nodeVersion, load: this Node's version and `require` (given in tests)
 * @throws StartupError (exit 78, one line) when that package is missing (a `node_modules` from
 *   before it was a dependency: run `npm install`) or its addon cannot be loaded by this Node (built
 *   for another: run `npm rebuild` with this Node)
 */
export function sqliteDatabaseClass(
  nodeVersion: string = process.versions.node,
  load: (id: string) => unknown = require,
): typeof BetterSqlite3 {
  const pkg = sqliteDriverPackage(nodeVersion);
  try {
    return load(pkg) as typeof BetterSqlite3;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const first = String((err as Error).message ?? err).split('\n')[0];
    if (code === 'MODULE_NOT_FOUND' && first.includes(`'${pkg}'`))
      throw new StartupError(`the SQLite driver ${pkg} is not installed: run npm install (README "Set-up")`);
    if (code === 'ERR_DLOPEN_FAILED')
      throw new StartupError(
        `the SQLite driver ${pkg} cannot be loaded by Node.js ${nodeVersion}: ${first} Run npm rebuild with this Node (README "Set-up").`,
      );
    throw err;
  }
}

/** A connection of either version (their types are the same: 12's). */
export type SqliteDatabase = BetterSqlite3.Database;
