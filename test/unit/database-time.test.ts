import { expect } from 'chai';
import pino from 'pino';
import { DATABASE_TIME_SQL, databaseTime } from '../../src/cluster/postgres/database-time';
import { LOCAL_RESOLUTION_MS } from '../../src/cluster/clock-offset';
import { OffsetClock } from '../../src/cluster/offset-clock';
import { ManualClock } from '../../src/domain/clock';

const T0 = 1_700_000_000_000;
const silent = pino({ level: 'silent' });

describe('the database clock (OffsetClock on clock_timestamp(), fake query)', () => {
  it('follows the database: local + offset − half the round trip, never ahead of it', async () => {
    const local = new ManualClock(T0);
    const databaseAhead = 2_500.25; // the database's clock is 2.5 s ahead of this node's
    const asked: string[] = [];
    const rtts = [30, 6, 12]; // the 6 ms sample counts
    let i = 0;
    const query = async (text: string) => {
      asked.push(text);
      const rtt = rtts[i++ % rtts.length];
      local.advance(rtt / 2);
      const ms = local.now() + databaseAhead; // the server reads its clock mid-way
      local.advance(rtt / 2);
      return { rows: [{ ms }] };
    };
    const clock = new OffsetClock(local, databaseTime({ query }), silent, undefined, { samplesPerRound: 3 });
    expect(clock.now()).to.equal(T0); // the local clock before the first sample
    await clock.measure();
    expect(asked).to.deep.equal([DATABASE_TIME_SQL, DATABASE_TIME_SQL, DATABASE_TIME_SQL]);
    expect(clock.correctionMs).to.be.closeTo(databaseAhead - 3 - LOCAL_RESOLUTION_MS, 0.01); // less 15 ppm of the sample's age
    const trueDatabaseTime = local.now() + databaseAhead;
    expect(clock.now()).to.be.at.most(trueDatabaseTime);
    expect(clock.now()).to.be.at.least(trueDatabaseTime - 3 - LOCAL_RESOLUTION_MS - 1); // whole ms, rounded down
  });

  it('a failed or senseless answer keeps the last correction', async () => {
    const local = new ManualClock(T0);
    let answer: () => Promise<{ rows: Array<Record<string, unknown>> }> = async () => ({ rows: [{ ms: local.now() - 700 }] });
    const clock = new OffsetClock(local, databaseTime({ query: () => answer() }), silent, undefined, { samplesPerRound: 1 });
    await clock.measure();
    const before = clock.correctionMs;
    expect(before).to.be.closeTo(-700 - LOCAL_RESOLUTION_MS, 1e-6);
    answer = async () => ({ rows: [{ ms: null }] });
    await clock.measure();
    answer = async () => Promise.reject(new Error('connection lost'));
    await clock.measure();
    expect(clock.correctionMs).to.equal(before);
    await databaseTime({ query: async () => ({ rows: [] }) })().then(
      () => expect.fail('an empty answer is no time'),
      (err: Error) => expect(err.message).to.match(/answered no time/),
    );
  });
});
