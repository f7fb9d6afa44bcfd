import path from 'node:path';
import { expect } from 'chai';
import { UsageError } from '../../load-tests/bench/flags';
import { median } from '../../load-tests/bench/stats';
import { FLAGS, parsePeerOptions, PEERS_HELP } from '../../load-tests/peers/peer-options';
import { peerTable, summarizeRounds } from '../../load-tests/peers/peer-report';
import { withDatabase } from '../../load-tests/peers/postgres-server';

/** One system's scenario results, as the peers' and our scenario functions record them. */
function system(rate: number, herdP99: number, early = 0): Record<string, unknown> {
  return {
    backlog: { tasks: 100, enqueue: { tasks_per_s: rate * 2 }, processing: { tasks_per_s: rate } },
    e2e: { tasks: 100, end_to_end: { tasks_per_s: rate } },
    herd: { tasks: 10, lateness: { p50_ms: herdP99 / 2, p99_ms: herdP99, max_ms: herdP99 }, started_early: early },
  };
}

function report(
  rounds: Array<{ systems: Record<string, Record<string, unknown>>; ratios: Record<string, Record<string, number | null>> }>,
): Record<string, any> {
  return { machine: { cpus: 2, node: 'v20', loadavg_at_start: [0, 0, 0], loadavg_at_end: [0, 0, 0] }, rounds, systems: {}, ratios: {} };
}

describe('bench-peers rounds', () => {
  it('median() is the middle value, the mean of the two middle ones for an even count, and skips missing figures', () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([null, 5, undefined, Number.NaN])).to.equal(5);
    expect(median([])).to.equal(null);
  });

  it('one round: systems and ratios are that round, and no medians are added', () => {
    const r = report([{ systems: { ours: system(100, 10) }, ratios: { 'ours/bullmq_c50': { end_to_end_per_s: 2 } } }]);
    summarizeRounds(r);
    expect(r.systems).to.equal(r.rounds[0].systems);
    expect(r.ratios).to.equal(r.rounds[0].ratios);
    expect(r).not.to.have.property('median');
  });

  it('several rounds: the median of each figure and of each ratio, the ratio ranges, and any early start', () => {
    const r = report([
      { systems: { ours: system(100, 10), peer: system(50, 40) }, ratios: { 'ours/peer': { end_to_end_per_s: 2, herd_p99_ms: 0.25 } } },
      {
        systems: { ours: system(300, 30, 1), peer: { error: 'peer died' } },
        ratios: { 'ours/peer': { end_to_end_per_s: null, herd_p99_ms: null } },
      },
      { systems: { ours: system(200, 20), peer: system(100, 80) }, ratios: { 'ours/peer': { end_to_end_per_s: 2.5, herd_p99_ms: 0.125 } } },
    ]);
    summarizeRounds(r);
    expect(r.systems).to.equal(r.rounds[0].systems);
    expect(r.median.rounds).to.equal(3);
    expect(r.median.headline.ours).to.include({
      end_to_end_per_s: 200,
      backlog_processing_per_s: 200,
      herd_p99_ms: 20,
      herd_started_early: 1,
    });
    // The failed round has no figures: the peer's medians are over the two other rounds.
    expect(r.median.headline.peer).to.include({ end_to_end_per_s: 75, herd_p99_ms: 60, herd_started_early: 0 });
    expect(r.median.ratios['ours/peer']).to.deep.equal({ end_to_end_per_s: 2.3, herd_p99_ms: 0.19 });
    expect(r.ratio_ranges['ours/peer']).to.deep.equal({ end_to_end_per_s: [2, 2.5], herd_p99_ms: [0.125, 0.25] });
    expect(r.median.partial).to.deep.equal([]);
    const table = peerTable(r);
    expect(table).to.contain('2: peer').and.contain('FAILED peer died');
    expect(table).to.match(/median ours\/peer +enqueue - *x +backlog -x +e2e 2\.3x/);
  });

  it('a rate that hit its time bound in some round marks its median as partial', () => {
    const bounded = system(40, 10);
    (bounded.e2e as { end_to_end: Record<string, unknown> }).end_to_end.complete = false;
    const r = report([
      { systems: { ours: system(100, 10), peer: bounded }, ratios: {} },
      { systems: { ours: system(120, 10), peer: system(60, 10) }, ratios: {} },
    ]);
    summarizeRounds(r);
    expect(r.median.partial).to.deep.equal(['peer e2e']);
    expect(r.median.headline.ours.end_to_end_system_cpu_s).to.equal(null);
    const table = peerTable(r);
    expect(table).to.match(/1: peer .* 40\* /);
    expect(table).to.match(/median peer .* 50\* /);
    expect(table).to.match(/median ours .* 110 /);
  });

  it('--rounds takes an integer from 1 to 20 and scales the default overall timeout', () => {
    expect(parsePeerOptions([])?.rounds).to.equal(1);
    const three = parsePeerOptions(['--rounds', '3']);
    expect(three?.rounds).to.equal(3);
    expect(three?.timeoutS).to.equal(2700);
    expect(parsePeerOptions(['--rounds', '3', '--timeout', '100'])?.timeoutS).to.equal(100);
    for (const bad of ['0', '21', '1.5', 'two']) expect(() => parsePeerOptions(['--rounds', bad]), bad).to.throw(UsageError, /--rounds/);
  });

  it('--cpu-prof takes a directory, resolved to an absolute path; without it there is no profile', () => {
    expect(parsePeerOptions([])?.cpuProfDir).to.equal(null);
    expect(parsePeerOptions(['--cpu-prof', 'prof/peers'])?.cpuProfDir).to.equal(path.resolve('prof/peers'));
    expect(() => parsePeerOptions(['--cpu-prof'])).to.throw(UsageError, /--cpu-prof/);
  });

  it('--ours-poll-ms takes 10..5000 ms (default 250); --help names every flag', () => {
    expect(parsePeerOptions([])?.oursPollMs).to.equal(250);
    expect(parsePeerOptions(['--ours-poll-ms', '200'])?.oursPollMs).to.equal(200);
    expect(() => parsePeerOptions(['--ours-poll-ms', '5'])).to.throw(UsageError, /--ours-poll-ms/);
    for (const flag of [...FLAGS, 'quick', 'keep-tmp']) expect(PEERS_HELP, flag).to.match(new RegExp(`^  --${flag}\\b`, 'm'));
  });
  it('--warmup takes 0..1,000,000 jobs (default 0: every system starts cold)', () => {
    expect(parsePeerOptions([])?.warmup).to.equal(0);
    expect(parsePeerOptions(['--warmup', '5000'])?.warmup).to.equal(5000);
    for (const bad of ['-1', '1.5', 'many', '1000001'])
      expect(() => parsePeerOptions(['--warmup', bad]), bad).to.throw(UsageError, /--warmup/);
  });
  it('--systems takes the PostgreSQL peers (default unchanged); --ours-store sqlite|postgres; pg-boss polling ≥ 500 ms', () => {
    expect([...(parsePeerOptions([])?.systems ?? [])]).to.deep.equal(['ours', 'bullmq', 'agenda']);
    const o = parsePeerOptions(['--systems', 'ours,graphile,graphile_batched,pgboss']);
    expect([...(o?.systems ?? [])]).to.deep.equal(['ours', 'graphile', 'graphile_batched', 'pgboss']);
    expect(o?.oursStore).to.equal('sqlite');
    expect(o?.graphileConcurrency).to.equal(24);
    expect([o?.pgbossBatchSize, o?.pgbossPollingMs, o?.pgbossWorkers]).to.deep.equal([500, 500, 1]);
    expect(parsePeerOptions(['--ours-store', 'postgres'])?.oursStore).to.equal('postgres');
    expect(() => parsePeerOptions(['--ours-store', 'mongodb'])).to.throw(UsageError, /--ours-store/);
    expect(() => parsePeerOptions(['--systems', 'ours,sidekiq'])).to.throw(UsageError, /sidekiq/);
    expect(() => parsePeerOptions(['--pgboss-polling-ms', '100'])).to.throw(UsageError, /--pgboss-polling-ms/);
  });

  it('withDatabase() swaps only the database of a PostgreSQL URL', () => {
    expect(withDatabase('postgres://u@127.0.0.1:5499/scheduler?sslmode=disable', 'bench_x')).to.equal(
      'postgres://u@127.0.0.1:5499/bench_x?sslmode=disable',
    );
  });
});
