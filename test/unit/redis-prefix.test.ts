import { expect } from 'chai';
import { redisPrefixOf } from '../../src/cluster/redis/coordination';

/** Schedulers sharing one Redis keep apart when they keep apart in PostgreSQL (their schemas). */
describe('redisPrefixOf', () => {
  it('scheduler: for the public schema and the other stores; scheduler:<schema>: for another schema', () => {
    expect(redisPrefixOf({ store: 'postgres', postgresSchema: 'public' })).to.equal('scheduler:');
    expect(redisPrefixOf({ store: 'postgres', postgresSchema: 's1' })).to.equal('scheduler:s1:');
    expect(redisPrefixOf({ store: 'postgres', postgresSchema: 's2' })).to.not.equal(
      redisPrefixOf({ store: 'postgres', postgresSchema: 's1' }),
    );
    expect(redisPrefixOf({ store: 'sqlite', postgresSchema: 's1' })).to.equal('scheduler:');
    expect(redisPrefixOf({ store: 'mongodb', postgresSchema: 'public' })).to.equal('scheduler:');
  });
});
