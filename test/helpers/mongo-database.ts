import { MongoClient } from 'mongodb';

/** `uri` with its database path replaced by `database` (options kept). */
export function withDatabase(base: string, database: string): string {
  const m = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(base);
  if (!m) throw new Error(`not a MongoDB connection string: ${base}`);
  return `${m[1]}/${database}${m[2] ?? ''}`;
}

/** Drops `database` on the server of `uri` (test clean-up). */
export async function dropDatabase(uri: string, database: string): Promise<void> {
  const client = new MongoClient(uri);
  try {
    await client.connect();
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}
