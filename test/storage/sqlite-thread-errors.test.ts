/**
 * SQLite-specific: an error crossing a store thread (writer, aggregate reads) is sent as plain data
 * and rebuilt on the calling side; an idempotency conflict comes back as its typed class.
 */
import { expect } from 'chai';
import { IdempotencyKeyConflict } from '../../src/storage/idempotency-conflict';
import { IDEMPOTENCY_CONFLICT } from '../../src/storage/store';
import { errorOfThread, threadErrorOf } from '../../src/storage/sqlite/thread-errors';

/** The hop: to plain data on the thread, a structured clone (what postMessage does), rebuilt on the caller's side. */
const hop = (err: unknown) => errorOfThread(structuredClone(threadErrorOf(err)));

describe('SQLite store thread errors', () => {
  it('an IdempotencyKeyConflict comes back as the same class with its message and details', () => {
    const sent = new IdempotencyKeyConflict('idempotency key "k" is held by task t-1, deleted', {
      taskId: 't-1',
      tenantId: 'acme',
      key: 'k',
      taskDeleted: true,
    });
    const got = hop(sent) as IdempotencyKeyConflict;
    expect(got).to.be.instanceOf(IdempotencyKeyConflict);
    expect(got.name).to.equal(IDEMPOTENCY_CONFLICT);
    expect(got.message).to.equal(sent.message);
    expect(got.details).to.deep.equal({ taskId: 't-1', tenantId: 'acme', key: 'k', taskDeleted: true });
    expect(got).not.to.have.property('code');
  });

  it('taskDeleted is absent when false', () => {
    const got = hop(new IdempotencyKeyConflict('m', { taskId: 't-2', tenantId: 'acme', key: 'k', taskDeleted: false }));
    expect((got as IdempotencyKeyConflict).details).to.deep.equal({ taskId: 't-2', tenantId: 'acme', key: 'k' });
  });

  it('any other error keeps its name, message and SQLite code, and is a plain Error', () => {
    const sqlite = Object.assign(new Error('UNIQUE constraint failed: tasks.id'), {
      name: 'SqliteError',
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
    const got = hop(sqlite);
    expect(got).not.to.be.instanceOf(IdempotencyKeyConflict);
    expect(got).to.include({ name: 'SqliteError', message: 'UNIQUE constraint failed: tasks.id', code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
  });

  it('an error named like a conflict but without details stays a plain Error', () => {
    const got = errorOfThread({ name: IDEMPOTENCY_CONFLICT, message: 'm' });
    expect(got).not.to.be.instanceOf(IdempotencyKeyConflict);
    expect(got.name).to.equal(IDEMPOTENCY_CONFLICT);
  });
});
