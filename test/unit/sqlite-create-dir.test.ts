import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, DEFAULT_SQLITE_PATH, loadConfig, mayCreateSqliteDir } from '../../src/config';

const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');

describe('SQLITE_CREATE_DIR (sqliteCreateDir)', () => {
  it('unset: only the default path ./data/scheduler.db gets its directory created (npm start on a fresh clone)', () => {
    const defaults = loadConfig({ configDir: CONFIG_DIR, env: {} });
    expect(defaults.sqlitePath).to.equal(DEFAULT_SQLITE_PATH);
    expect(defaults.sqliteCreateDir).to.equal(null);
    expect(mayCreateSqliteDir(defaults)).to.equal(true);
    expect(mayCreateSqliteDir(loadConfig({ configDir: CONFIG_DIR, env: { SQLITE_PATH: '/mnt/volume/scheduler.db' } }))).to.equal(false);
  });

  it('true and false are read from the environment; anything else is refused naming the variable', () => {
    const on = loadConfig({ configDir: CONFIG_DIR, env: { SQLITE_PATH: '/mnt/v/s.db', SQLITE_CREATE_DIR: 'true' } });
    expect(mayCreateSqliteDir(on)).to.equal(true);
    expect(mayCreateSqliteDir(loadConfig({ configDir: CONFIG_DIR, env: { SQLITE_CREATE_DIR: 'false' } }))).to.equal(false);
    expect(() => loadConfig({ configDir: CONFIG_DIR, env: { SQLITE_CREATE_DIR: 'yes' } }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/^invalid configuration: sqliteCreateDir \(env SQLITE_CREATE_DIR\)/);
  });
});
