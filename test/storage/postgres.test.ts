/**
 * Runs the storage conformance suite against PostgresStore on the server named by POSTGRES_URL
 * (a private PostgreSQL in CI: `source .ci/services.sh`), with a fresh schema per test, dropped
 * afterwards. Without POSTGRES_URL one test fails when CI is set (a service that did not start
 * must fail CI), and is skipped otherwise.
 */
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { Store } from '../../src/storage/store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres, withClient } from '../helpers/postgres-schema';
import { describeStoreConformance } from './conformance';

const url = postgresUrl();

if (!url) {
  describe('Store conformance: postgres', () => registerMissingPostgres());
} else {
  const schemas = new Map<Store, string>();
  describeStoreConformance('postgres', {
    async create() {
      const schema = freshSchema('conformance');
      const store = new PostgresStore(url, { schema, poolSize: 4 });
      schemas.set(store, schema);
      return store;
    },
    async destroy(store) {
      await store.close();
      const schema = schemas.get(store);
      schemas.delete(store);
      if (schema) await dropSchema(url, schema);
    },
    async forceState(store, id, state) {
      const schema = schemas.get(store);
      if (!schema) throw new Error('unknown store');
      await withClient(url, schema, (c) => c.query('UPDATE tasks SET state = $1 WHERE id = $2', [state, id]));
    },
  });
}
