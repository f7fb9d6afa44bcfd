/**
 * Smoke test of the service on the MongoDB store: the real process with SCHEDULER_STORE=mongodb
 * on a fresh database of the server named by MONGODB_URI (FerretDB in CI), an echo task submitted
 * over REST until SUCCEEDED. Skipped without MONGODB_URI.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { http, isTerminal, waitForTask } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';
import { dropDatabase, withDatabase } from '../helpers/mongo-database';

const uri = process.env.MONGODB_URI;

describe('service on the MongoDB store (real process, SCHEDULER_STORE=mongodb)', function () {
  this.timeout(60_000);
  if (!uri) {
    it.skip('needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  const database = `smoke_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const dir = tempDir();
  let svc: ServiceProcess | null = null;

  before(async () => {
    svc = await startServiceProcess(dir.path, { SCHEDULER_STORE: 'mongodb', MONGODB_URI: withDatabase(uri, database), WORKERS: '1' });
  });

  after(async () => {
    await svc?.stop();
    dir.remove();
    await dropDatabase(uri, database);
  });

  it('runs an echo task to SUCCEEDED and stores it in the MongoDB database', async () => {
    const payload = { hello: 'mongo', n: [1, 2, 3], 'dotted.key': true };
    const res = await http('POST', `${svc!.url}/api/v1/tasks`, { task_type: 'echo', payload });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const t = await waitForTask(svc!.url, res.body.task_id, isTerminal);
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.result).to.deep.equal(payload);
    const client = new MongoClient(uri);
    try {
      await client.connect();
      const doc = await client.db(database).collection('tasks').findOne({ _id: res.body.task_id } as never);
      expect(doc?.state).to.equal('SUCCEEDED');
    } finally {
      await client.close();
    }
  });
});
