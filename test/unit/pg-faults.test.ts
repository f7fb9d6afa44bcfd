import { expect } from 'chai';
import { postgresConfigProblem, postgresFaultOf } from '../../src/storage/postgres/pg-faults';

const pgError = (code: string, message: string, severity = 'ERROR') => Object.assign(new Error(message), { code, severity });

describe('PostgreSQL errors: which are the server away (503), which are configuration at start-up', () => {
  it('the idle-in-transaction timeout, a statement timeout and any FATAL (the session ended) are connection_lost, not a 500', () => {
    for (const err of [
      pgError('25P03', 'terminating connection due to idle-in-transaction timeout', 'FATAL'),
      pgError('57014', 'canceling statement due to statement timeout'),
      pgError('28P01', 'password authentication failed for user "x"', 'FATAL'),
    ]) {
      expect(postgresFaultOf(err, 'pg', 5), err.message).to.deep.include({ kind: 'connection_lost', recoverable: true, since: 5 });
    }
    expect(postgresFaultOf(pgError('22021', 'invalid byte sequence'), 'pg', 0)).to.equal(null);
    expect(postgresFaultOf(pgError('23505', 'duplicate key'), 'pg', 0)).to.equal(null);
  });

  it('a write refused as read-only (a hot standby, default_transaction_read_only) is the recoverable read_only fault, not a 500', () => {
    const err = pgError('25006', 'cannot execute INSERT in a read-only transaction');
    expect(postgresFaultOf(err, 'pg', 7)).to.deep.include({ kind: 'read_only', recoverable: true, since: 7 });
  });

  it('at start-up: a wrong password or role, a missing database, a missing privilege name POSTGRES_URL; others are not configuration', () => {
    expect(postgresConfigProblem(pgError('28P01', 'password authentication failed for user "x"', 'FATAL'), 'postgres://h/db')).to.match(
      /^invalid configuration: postgresUrl \(env POSTGRES_URL\): postgres:\/\/h\/db: password authentication failed/,
    );
    expect(postgresConfigProblem(pgError('3D000', 'database "db" does not exist', 'FATAL'), 't')).to.include('create it first');
    expect(postgresConfigProblem(pgError('42501', 'permission denied for database db'), 't')).to.include('docs/POSTGRES.md');
    expect(postgresConfigProblem(pgError('57P03', 'the database system is starting up', 'FATAL'), 't')).to.equal(null);
    expect(postgresConfigProblem(new Error('connect ECONNREFUSED'), 't')).to.equal(null);
  });
});
