import { expect } from 'chai';
import { StartupError } from '../../src/domain/startup-error';
import { sqliteDatabaseClass, sqliteDriverPackage } from '../../src/storage/sqlite/driver';

/**
 * The embedded store's better-sqlite3: 13 (the alias better-sqlite3-napi) from Node 22 on, 12 on
 * Node 20; a driver that is missing or built for another Node is one line at start (exit 78), not a
 * stack.
 */
describe('SQLite driver per Node version (src/storage/sqlite/driver.ts)', () => {
  it('better-sqlite3 12 on Node 20, 13 (better-sqlite3-napi) on 22 and later; the one this Node loads opens a database', () => {
    expect(sqliteDriverPackage('20.20.2')).to.equal('better-sqlite3');
    for (const v of ['22.0.0', '22.23.3', '24.18.1', '24.21.0', '26.1.0'])
      expect(sqliteDriverPackage(v), v).to.equal('better-sqlite3-napi');
    const Database = sqliteDatabaseClass();
    const db = new Database(':memory:');
    expect(db.prepare('SELECT 1 AS one').get()).to.deep.equal({ one: 1 });
    db.close();
  });

  it('a driver not installed, or built for another Node, is a StartupError saying what to run', () => {
    const failing = (err: Error & { code?: string }) => () => {
      throw err;
    };
    const missing = Object.assign(new Error("Cannot find module 'better-sqlite3-napi'\nRequire stack:\n- x.js"), {
      code: 'MODULE_NOT_FOUND',
    });
    expect(() => sqliteDatabaseClass('24.21.0', failing(missing)))
      .to.throw(StartupError)
      .with.property('message', 'the SQLite driver better-sqlite3-napi is not installed: run npm install (README "Set-up")');
    const abi = Object.assign(new Error("The module 'better_sqlite3.node' was compiled against a different Node.js version.\nstack"), {
      code: 'ERR_DLOPEN_FAILED',
    });
    const e = (() => {
      try {
        sqliteDatabaseClass('20.20.2', failing(abi));
      } catch (err) {
        return err as Error;
      }
    })();
    expect(e).to.be.instanceOf(StartupError);
    expect(e?.message).to.equal(
      'the SQLite driver better-sqlite3 cannot be loaded by Node.js 20.20.2: The module \'better_sqlite3.node\' was compiled against a different Node.js version. Run npm rebuild with this Node (README "Set-up").',
    );
    // Another module missing (a dependency of the driver) is not this package's absence: thrown as it is.
    const other = Object.assign(new Error("Cannot find module 'bindings'"), { code: 'MODULE_NOT_FOUND' });
    expect(() => sqliteDatabaseClass('20.20.2', failing(other)))
      .to.throw(Error, "Cannot find module 'bindings'")
      .and.not.be.instanceOf(StartupError);
  });
});
