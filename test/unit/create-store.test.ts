import { expect } from 'chai';
import { createStore } from '../../src/storage/create-store';
import { databaseOfUri } from '../../src/storage/mongo/mongo-store';
import { StoreConfigError } from '../../src/storage/store';

describe('createStore (SCHEDULER_STORE)', () => {
  it('makes a MongoDB store for "mongodb" with a URI, without connecting yet', () => {
    const store = createStore({ store: 'mongodb', sqlitePath: 'unused.db', mongodbUri: 'mongodb://127.0.0.1:1/sched' });
    expect(store.name).to.equal('mongodb');
  });

  for (const mongodbUri of [null, '', '  ']) {
    it(`refuses "mongodb" without MONGODB_URI (${JSON.stringify(mongodbUri)}) with an invalid-configuration error naming the variable`, () => {
      expect(() => createStore({ store: 'mongodb', sqlitePath: 'unused.db', mongodbUri })).to.throw(
        /invalid configuration: mongodbUri \(env MONGODB_URI\)/,
      );
    });
  }

  it('a MONGODB_URI the driver cannot parse: open() rejects with StoreConfigError naming the variable (no server needed)', async () => {
    const store = createStore({ store: 'mongodb', sqlitePath: 'unused.db', mongodbUri: 'mongodb://127.0.0.1:1/x?foo=bar' });
    const err = await store.open(4).then(
      () => expect.fail('opened'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StoreConfigError);
    expect((err as Error).message).to.match(/^invalid configuration: mongodbUri \(env MONGODB_URI\): option foo is not supported/);
  });

  it('makes a PostgreSQL store for "postgres" with a URL, without connecting yet', () => {
    const store = createStore({
      store: 'postgres',
      sqlitePath: 'unused.db',
      mongodbUri: null,
      postgresUrl: 'postgres://127.0.0.1:1/sched',
    });
    expect(store.name).to.equal('postgres');
  });

  for (const postgresUrl of [null, '', '  ']) {
    it(`refuses "postgres" without POSTGRES_URL (${JSON.stringify(postgresUrl)}) with an invalid-configuration error naming the variable`, () => {
      expect(() => createStore({ store: 'postgres', sqlitePath: 'unused.db', mongodbUri: null, postgresUrl })).to.throw(
        /invalid configuration: postgresUrl \(env POSTGRES_URL\)/,
      );
    });
  }

  it('makes the SQLite store for "sqlite"', () => {
    expect(createStore({ store: 'sqlite', sqlitePath: ':memory:', mongodbUri: null }).name).to.equal('sqlite');
  });
});

describe('databaseOfUri', () => {
  it('reads the database of the connection string path, or null when there is none', () => {
    expect(databaseOfUri('mongodb://h:27017/sched?w=majority')).to.equal('sched');
    expect(databaseOfUri('mongodb+srv://u:p@cluster.example.net/prod_db')).to.equal('prod_db');
    expect(databaseOfUri('mongodb://h1:1,h2:2/db%2Dx?replicaSet=rs')).to.equal('db-x');
    expect(databaseOfUri('mongodb://h:27017/')).to.equal(null);
    expect(databaseOfUri('mongodb://h:27017')).to.equal(null);
    expect(databaseOfUri('mongodb://h:27017/?replicaSet=rs')).to.equal(null);
  });
});
