/**
 * The shared store of the cluster tests (test/integration/cluster-*.test.ts, test/chaos/
 * cluster-sigkill.test.ts, lease-sigstop.test.ts) and benchmarks: `mongodb` (a fresh database on
 * `MONGODB_URI`, FerretDB in CI) or `postgres` (a fresh schema on `POSTGRES_URL`, given to the
 * nodes as `POSTGRES_SCHEMA`). A test file registers its suite once per store with
 * {@link describeEachClusterStore} (every store whose server is named; `CLUSTER_STORE` narrows the
 * run to one store), makes one {@link ClusterDatabase} per cluster, gives its `env` (service
 * processes) or `config` (schedulers in the test process) to every node, reads the stored leases
 * and tasks through it (not through a node), and drops it at the end.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { dropDatabase, withDatabase } from './mongo-database';
import { Client } from 'pg';
import { dropSchema, postgresUrl } from './postgres-schema';
import { detectAtomicUpdates } from '../../src/storage/mongo/collections';

/** The stores a test cluster can share. */
export type ClusterStoreKind = 'mongodb' | 'postgres';

/** A partition's lease as stored: its owner, epoch and `expires_at` (epoch ms). */
export interface StoredLease {
  owner: string;
  epoch: number;
  expiresAt: number;
}

/** Direct reads of a cluster's store on one open connection (polling without a handshake each time). */
export interface ClusterStoreReader {
  /** The stored leases: partition → lease. */
  leases(): Promise<Map<number, StoredLease>>;
  /** Which of `ids` are stored tasks. */
  storedTaskIds(ids: readonly string[]): Promise<Set<string>>;
  /** How many stored tasks are in `state` (`SUCCEEDED`, …). */
  countTasks(state: string): Promise<number>;
  close(): Promise<void>;
}

/** One cluster's fresh database (MongoDB) or schema (PostgreSQL). */
export interface ClusterDatabase {
  kind: ClusterStoreKind;
  /** The database or schema name (for messages). */
  name: string;
  /** The store part of a service process's environment (`SCHEDULER_STORE` and where). */
  env: Record<string, string>;
  /** The same as config keys, for a scheduler started in the test process (`loadConfig` overrides). */
  config: { store: ClusterStoreKind; mongodbUri?: string; postgresUrl?: string; postgresSchema?: string };
  /** A connection for direct reads (close it). */
  connect(): Promise<ClusterStoreReader>;
  /** The stored leases, read on a connection of their own: partition → lease. */
  readLeases(): Promise<Map<number, StoredLease>>;
  /** Which of `ids` are stored tasks, read on a connection of their own. */
  storedTaskIds(ids: readonly string[]): Promise<Set<string>>;
  /**
   * Whether one document's or row's compare-and-set is atomic across connections: true on
   * PostgreSQL and MongoDB, false on FerretDB 1.x (an update is a read then a write there; see
   * MongoCapabilities). Guarantees resting on it between nodes can only be shown where it is true.
   */
  atomicUpdates(): Promise<boolean>;
  /** Drops the database or schema (errors ignored: clean-up). */
  drop(): Promise<void>;
}

/**
 * How many tasks a multi-process cluster test runs on `store`: `n` on PostgreSQL, about a third on
 * MongoDB. The MongoDB suites run on FerretDB 1.x in CI, whose compare-and-sets scan the collection
 * (docs/MONGODB.md): with 150 tasks on shared cores at load 7 and more, three members did not reach
 * 50 side effects in 60 s, so those runs measured FerretDB's speed, not the cluster's behaviour.
 */
export function clusterTestTasks(store: ClusterStoreKind, n: number): number {
  return store === 'mongodb' ? Math.max(1, Math.round(n * 0.3)) : n;
}

/** Every store a test cluster can share, in the order the suites are registered. */
export const CLUSTER_STORE_KINDS: readonly ClusterStoreKind[] = ['mongodb', 'postgres'];

function parseKind(v: string): ClusterStoreKind {
  if (v === 'mongodb' || v === 'postgres') return v;
  throw new Error(`CLUSTER_STORE must be "mongodb" or "postgres", not ${JSON.stringify(v)}`);
}

/** The kind named by `CLUSTER_STORE` (default `mongodb`): the benchmarks' store. */
export function clusterStoreKind(): ClusterStoreKind {
  const v = process.env.CLUSTER_STORE?.trim();
  return v ? parseKind(v) : 'mongodb';
}

/**
 * The stores the cluster test suites are registered for: both, or only the one `CLUSTER_STORE`
 * names (a local run on one server).
 * @throws Error when `CLUSTER_STORE` names no store
 */
export function clusterStoresToTest(): ClusterStoreKind[] {
  const v = process.env.CLUSTER_STORE?.trim();
  return v ? [parseKind(v)] : [...CLUSTER_STORE_KINDS];
}

/** Why a cluster cannot run on `kind` (its server is not named), or null. */
export function clusterStoreMissing(kind: ClusterStoreKind = clusterStoreKind()): string | null {
  if (kind === 'postgres') {
    return postgresUrl() ? null : 'needs POSTGRES_URL (`source .ci/services.sh` starts a private PostgreSQL)';
  }
  return process.env.MONGODB_URI ? null : 'needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)';
}

/**
 * Registers `describe(\`${title} [${kind}]\`)` for every store of {@link clusterStoresToTest}, the
 * body getting the store's kind. A store whose server is not named is skipped, except when the
 * environment has `CI` set: there its suite fails (one test naming the missing variable), so a CI
 * run without a store's server cannot pass silently.
 * @param only the stores this suite is for (default: every store)
 */
export function describeEachClusterStore(
  title: string,
  body: (this: Mocha.Suite, kind: ClusterStoreKind) => void,
  only: readonly ClusterStoreKind[] = CLUSTER_STORE_KINDS,
): void {
  for (const kind of clusterStoresToTest().filter((k) => only.includes(k))) {
    describe(`${title} [${kind}]`, function () {
      const missing = clusterStoreMissing(kind);
      if (missing) {
        if (process.env.CI) {
          it(`has its ${kind} server`, () => {
            throw new Error(`CI is set but the ${kind} cluster tests cannot run: ${missing}`);
          });
        } else {
          it.skip(missing, () => undefined);
        }
        return;
      }
      body.call(this, kind);
    });
  }
}

/**
 * A fresh database (`<prefix>_<16 hex>`) on the server of `kind` (default: `CLUSTER_STORE`'s).
 * Nothing is created until a node opens it (the store migrates at start-up).
 * @throws Error when that store's server is not named ({@link clusterStoreMissing})
 */
export function freshClusterDatabase(prefix = 'cluster', kind: ClusterStoreKind = clusterStoreKind()): ClusterDatabase {
  const missing = clusterStoreMissing(kind);
  if (missing) throw new Error(missing);
  const name = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  return kind === 'postgres' ? postgresDatabase(postgresUrl() as string, name) : mongoDatabase(process.env.MONGODB_URI as string, name);
}

/** `connect`'s one-shot uses, for {@link ClusterDatabase}. */
function withReader<T>(connect: () => Promise<ClusterStoreReader>, fn: (r: ClusterStoreReader) => Promise<T>): Promise<T> {
  return connect().then(async (r) => {
    try {
      return await fn(r);
    } finally {
      await r.close();
    }
  });
}

function mongoDatabase(base: string, name: string): ClusterDatabase {
  const uri = withDatabase(base, name);
  const connect = async (): Promise<ClusterStoreReader> => {
    const client = new MongoClient(uri);
    await client.connect();
    const db = client.db();
    return {
      async leases() {
        const docs = await db
          .collection<{ _id: number; owner: string; epoch: number; expires_at: number }>('partition_leases')
          .find({})
          .toArray();
        return new Map(docs.map((d) => [d._id, { owner: d.owner, epoch: d.epoch, expiresAt: d.expires_at }]));
      },
      async storedTaskIds(ids) {
        const docs = await db
          .collection<{ _id: string }>('tasks')
          .find({ _id: { $in: [...ids] } }, { projection: { _id: 1 } })
          .toArray();
        return new Set(docs.map((d) => d._id));
      },
      countTasks: (state) => db.collection('tasks').countDocuments({ state }),
      close: () => client.close(),
    };
  };
  return {
    kind: 'mongodb',
    name,
    env: { SCHEDULER_STORE: 'mongodb', MONGODB_URI: uri },
    config: { store: 'mongodb', mongodbUri: uri },
    connect,
    readLeases: () => withReader(connect, (r) => r.leases()),
    storedTaskIds: (ids) => withReader(connect, (r) => r.storedTaskIds(ids)),
    async atomicUpdates() {
      const client = new MongoClient(uri);
      try {
        await client.connect();
        return await detectAtomicUpdates(client.db());
      } finally {
        await client.close();
      }
    },
    drop: () => dropDatabase(base, name).catch(() => undefined),
  };
}

function postgresDatabase(url: string, schema: string): ClusterDatabase {
  const connect = async (): Promise<ClusterStoreReader> => {
    const c = new Client({ connectionString: url, options: `-c search_path=${schema}` });
    await c.connect();
    return {
      async leases() {
        const { rows } = await c.query<{ partition: number; owner: string; epoch: string; expires_at: string }>(
          'SELECT partition, owner, epoch, expires_at FROM partition_leases',
        );
        return new Map(rows.map((r) => [r.partition, { owner: r.owner, epoch: Number(r.epoch), expiresAt: Number(r.expires_at) }]));
      },
      async storedTaskIds(ids) {
        const { rows } = await c.query<{ id: string }>('SELECT id FROM tasks WHERE id = ANY($1::text[])', [[...ids]]);
        return new Set(rows.map((r) => r.id));
      },
      async countTasks(state) {
        const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM tasks WHERE state = $1', [state]);
        return Number(rows[0].n);
      },
      close: () => c.end(),
    };
  };
  return {
    kind: 'postgres',
    name: schema,
    env: { SCHEDULER_STORE: 'postgres', POSTGRES_URL: url, POSTGRES_SCHEMA: schema },
    config: { store: 'postgres', postgresUrl: url, postgresSchema: schema },
    connect,
    readLeases: () => withReader(connect, (r) => r.leases()),
    storedTaskIds: (ids) => withReader(connect, (r) => r.storedTaskIds(ids)),
    atomicUpdates: async () => true,
    drop: () => dropSchema(url, schema).catch(() => undefined),
  };
}
