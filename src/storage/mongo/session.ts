/**
 * The connection of an open MongoStore: connect with the store's write concern, create the
 * collections and indexes (idempotent), check the partition count recorded on first use, and
 * detect what the server can do. The store holds one {@link Session} between open and close.
 */
import { MongoClient, MongoClientOptions } from 'mongodb';
import { StoreConfigError } from '../store';
import type { Clock } from '../../domain/clock';
import { checkMeta, collectionsOf, detectAtomicUpdates, ensureIndexes, MongoCapabilities, MongoCollections } from './collections';

export interface MongoStoreOptions {
  /** Database name; default: the one in the URI path, else `scheduler`. */
  database?: string;
  /** How long to wait for a server at open (ms; default 10 000). */
  serverSelectionTimeoutMs?: number;
  /**
   * The scheduler's clock. Given, a claim's start and lease run from the later of the caller's
   * `now` and this clock's time when the claim's write runs (it may wait in the write queue);
   * absent, from `now`.
   */
  clock?: Pick<Clock, 'now'>;
}

/** What an open store holds; replaced as a whole by open and close. */
export interface Session {
  client: MongoClient;
  c: MongoCollections;
  partitions: number;
  capabilities: MongoCapabilities;
}

/**
 * Connects to `uri` (write concern `{w: 'majority', j: true}`) and prepares the database.
 * @throws StoreConfigError when the database was created with another partition count, or the
 *   driver cannot parse `uri`; the driver's error when no server answers within `serverSelectionTimeoutMs`
 */
export async function openSession(uri: string, options: MongoStoreOptions, partitions: number): Promise<Session> {
  const clientOptions: MongoClientOptions = {
    writeConcern: { w: 'majority', journal: true },
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMs ?? 10_000,
  };
  let client: MongoClient;
  try {
    client = new MongoClient(uri, clientOptions);
  } catch (err) {
    // The driver parses the string here (MongoParseError, MongoInvalidArgumentError): a configuration error.
    throw new StoreConfigError(`invalid configuration: mongodbUri (env MONGODB_URI): ${(err as Error).message}`);
  }
  try {
    await client.connect();
    const dbName = options.database ?? databaseOfUri(uri) ?? 'scheduler';
    const db = client.db(dbName);
    const c = collectionsOf(db);
    await checkMeta(c, partitions, dbName);
    const capabilities = { ...(await ensureIndexes(c)), atomicUpdates: await detectAtomicUpdates(db) };
    return { client, c, partitions, capabilities };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}

/** The database named in the path of a connection string (`mongodb://host/<db>?…`), if any. */
export function databaseOfUri(uri: string): string | null {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(uri);
  const name = m ? decodeURIComponent(m[1]) : '';
  return name === '' ? null : name;
}
