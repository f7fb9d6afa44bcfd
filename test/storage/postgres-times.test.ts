/**
 * The PostgreSQL store with a clock that reads fractional milliseconds (with Redis the scheduler's
 * clock is the local one plus a measured offset): times are stored as whole ms (bigint columns,
 * src/storage/postgres/epoch-ms.ts), `now` rounded down and expiries up, so no comparison with a
 * stored time changes and a lease never ends before its holder reckons. Skipped without
 * POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { newTask, PARTITIONS, startTask, T0 } from './fixtures';

const url = postgresUrl();
const TTL = 15_000;

describe('PostgresStore: fractional epoch-ms times (cluster operations)', () => {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let s: PostgresStore;

  beforeEach(async () => {
    schema = freshSchema('times');
    s = new PostgresStore(url, { schema, poolSize: 2 });
    await s.open(PARTITIONS);
  });

  afterEach(async () => {
    await s.close();
    await dropSchema(url, schema);
  });

  it('leases: granted until the expiry rounded up; renewed and refused exactly as with whole ms', async () => {
    const grant = await s.acquireLease(0, 'a', T0 + 0.25, TTL);
    expect(grant).to.deep.equal({ granted: true, lease: { partition: 0, owner: 'a', epoch: 1, expiresAt: T0 + TTL + 1 } });
    expect((await s.acquireLease(0, 'b', T0 + TTL + 0.75, TTL)).granted).to.equal(false); // before T0 + TTL + 1
    expect(await s.renewLease(0, 'a', 1, T0 + 5000.5, TTL)).to.deep.equal({
      partition: 0,
      owner: 'a',
      epoch: 1,
      expiresAt: T0 + 5001 + TTL,
    });
    expect(await s.renewLease(0, 'a', 1, T0 + 5001 + TTL + 0.1, TTL)).to.equal(null); // expired at T0 + 5001 + TTL
    expect((await s.acquireLease(0, 'b', T0 + 5001 + TTL + 0.1, TTL)).granted).to.equal(true);
  });

  it('members, checkpoints, progress and log lines take fractional times', async () => {
    expect(await s.heartbeatMember({ memberId: 'm', instance: 'i' }, T0 + 0.5, TTL)).to.deep.equal({
      held: true,
      member: { memberId: 'm', address: null, heartbeatAt: T0, expiresAt: T0 + TTL + 1, instance: 'i', bus: null },
    });
    expect((await s.listLiveMembers(T0 + TTL + 0.5)).map((m) => m.memberId)).to.deep.equal(['m']);
    await s.insertTasks([newTask('t')]);
    const attempt = await startTask(s, 't', T0);
    expect(await s.saveCheckpoint('t', attempt, { n: 1 }, T0 + 1.5)).to.include({ kind: 'saved', savedAt: T0 + 1 });
    expect(await s.reportProgress([{ taskId: 't', attempt, value: 0.5 }], T0 + 2.5)).to.equal(1);
    const line = { n: 1, at: T0 + 3.5, message: 'm', fields: null, truncated: false };
    expect(await s.appendAttemptLogs([{ taskId: 't', attempt, lines: [line], keepFrom: 1 }], T0 + 3.5)).to.equal(1);
    expect((await s.getAttemptLog('t', attempt)).lines).to.deep.equal([{ ...line, at: T0 + 3 }]);
    const task = await s.getTask('t');
    expect(task?.progress).to.include({ reportedAt: T0 + 2 });
  });
});
