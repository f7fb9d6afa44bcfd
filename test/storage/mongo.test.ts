/**
 * Runs the storage conformance suite against MongoStore on the server named by MONGODB_URI
 * (FerretDB in CI: `source .ci/services.sh`), with a fresh database per test, dropped afterwards.
 * Without MONGODB_URI one skipped test says why.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { dropDatabase } from '../helpers/mongo-database';
import { MongoStore } from '../../src/storage/mongo/mongo-store';
import { Store } from '../../src/storage/store';
import { describeStoreConformance } from './conformance';

const uri = process.env.MONGODB_URI;

if (!uri) {
  describe('Store conformance: mongodb', () => {
    it.skip('needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)', () => undefined);
  });
} else {
  const databases = new Map<Store, string>();
  describeStoreConformance('mongodb', {
    async create() {
      const database = `conformance_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
      const store = new MongoStore(uri, { database });
      databases.set(store, database);
      return store;
    },
    async destroy(store) {
      await store.close();
      const database = databases.get(store);
      databases.delete(store);
      if (!database) return;
      await dropDatabase(uri, database);
    },
    async forceState(store, id, state) {
      const client = new MongoClient(uri);
      try {
        await client.connect();
        await client
          .db(databases.get(store))
          .collection<{ _id: string; state: string }>('tasks')
          .updateOne({ _id: id }, { $set: { state } });
      } finally {
        await client.close();
      }
    },
  });
}
