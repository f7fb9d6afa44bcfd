import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { handlerSource, SeqBook, verifyEffects } from '../../load-tests/bench/soak/effect-log';
import type { HttpClient, HttpResult } from '../../load-tests/bench/http-client';
import { SteadyStream } from '../../load-tests/bench/soak/soak-load';
import { parseSoakOptions, UsageError } from '../../load-tests/bench/soak/soak-options';
import type { LagRecord } from '../../load-tests/bench/soak/soak-samples';
import { SoakSample, verdict, windowFigures } from '../../load-tests/bench/soak/soak-verdict';
import { tempDir } from '../helpers/temp-dir';

type Handler = (payload: unknown, ctx: { taskId: string; attempt: number }) => Promise<unknown>;

describe('bench-soak: the side-effect check', () => {
  const dir = tempDir('soak-effects-');
  after(() => dir.remove());

  it('the handler fails a fail_first task once, then writes its seq; a cron instance writes its task id', async () => {
    const file = path.join(dir.path, 'handler.js');
    fs.writeFileSync(file, handlerSource(dir.path));
    const handler = ((await import(file)) as { default: Handler }).default;
    let thrown: unknown = null;
    await handler({ seq: 7, fail_first: true }, { taskId: 't7', attempt: 1 }).catch((e: unknown) => (thrown = e));
    expect(thrown).to.be.instanceOf(Error);
    await handler({ seq: 7, fail_first: true }, { taskId: 't7', attempt: 2 });
    await handler({}, { taskId: 'cron-1', attempt: 1 });
    const text = fs.readFileSync(path.join(dir.path, `effects.${process.pid}`), 'utf8');
    expect(text).to.equal('7\nccron-1\n');
  });

  it('finds the missing, the duplicated and the unacknowledged effects', () => {
    const d = path.join(dir.path, 'check');
    fs.mkdirSync(d);
    const book = new SeqBook();
    const first = book.take(5);
    for (let s = first; s < first + 4; s++) book.acknowledge(s, 'steady'); // seq 4: sent, never acknowledged
    fs.writeFileSync(path.join(d, 'effects.1'), '0\n1\ncA\n');
    fs.writeFileSync(path.join(d, 'effects.2'), '1\n4\ncA\n'); // 1 and cA twice; 2 and 3 missing; 4 unacknowledged
    const r = verifyEffects(d, book, ['A', 'B']);
    expect(r).to.include({ files: 2, lines: 6, duplicated: 2, unacknowledged: 1, cron_effects: 1, cron_missing: 1, ok: false });
    expect(r.missing).to.deep.equal({ steady: 2 });
    expect(r.missing_examples).to.deep.equal([2, 3]);

    const clean = path.join(dir.path, 'clean');
    fs.mkdirSync(clean);
    fs.writeFileSync(path.join(clean, 'effects.9'), '3\n2\n1\n0\ncA\ncB\n');
    expect(verifyEffects(clean, book, ['A', 'B']).ok).to.equal(true);
  });
});

describe('bench-soak: the verdict', () => {
  const start = 1_000_000;
  const sample = (t_s: number, rss: number, wal: number): SoakSample => ({
    t_s,
    main_rss_mb: rss,
    workers_rss_mb: 100,
    event_loop_max_ms: 5,
    wal_mb: wal,
    db_mb: t_s,
  });
  /** One lag record due at `tS` seconds after the start. */
  const lag = (tS: number, ms: number): LagRecord => ({ dueMs: start + tS * 1000, lagMs: ms, notStarted: false, sendLagMs: ms + 1 });

  it('leaves out the tasks due during a flood, and compares the last window with the first after the warm-up', () => {
    const samples = [sample(30, 200, 10), sample(90, 200, 10), sample(150, 215, 10), sample(210, 230, 12)];
    const lags = [lag(70, 10), lag(80, 1000), lag(100, 10), lag(130, 10.5), lag(190, 11), lag(200, 11)];
    const floods = [{ startWall: start + 79_000, endWall: start + 81_000 }];
    const w = windowFigures(samples, lags, floods, start, 60_000, 120_000);
    expect(w).to.include({ main_rss_mb: 200, steady_p99_lag_ms: 10, steady_lag_tasks: 2, steady_p99_lag_with_floods_ms: 1000 });
    expect(w.steady_p99_start_after_send_ms).to.equal(11);

    const v = verdict(samples, lags, floods, start, { warmupMs: 60_000, windowMs: 60_000, durationMs: 240_000, tolerance: 0.1 }) as {
      figures: Record<string, { change_pct: number; within: boolean; every_window_within: boolean }>;
      figures_pass: boolean;
      windows: unknown[];
    };
    expect(v.windows).to.have.length(3);
    expect(v.figures.main_rss_mb).to.include({ change_pct: 15, within: false, every_window_within: false });
    expect(v.figures.steady_p99_lag_ms).to.include({ change_pct: 10, within: true });
    expect(v.figures.wal_mb).to.include({ change_pct: 20, within: false });
    expect(v.figures_pass).to.equal(false);
  });

  it('gives each window the largest V8 heap committed of its samples, and null when the scrapes had none', () => {
    const withHeap = [
      { ...sample(70, 300, 10), main_heap_total_mb: 250.5 },
      { ...sample(80, 310, 10), main_heap_total_mb: 262 },
      { ...sample(90, 305, 10), main_heap_total_mb: null },
    ];
    expect(windowFigures(withHeap, [], [], start, 60_000, 120_000).main_heap_total_mb).to.equal(262);
    expect(windowFigures([sample(70, 300, 10)], [], [], start, 60_000, 120_000).main_heap_total_mb).to.equal(null);
  });

  it('refuses a warm-up and window longer than the run', () => {
    expect(() => parseSoakOptions(['--duration', '5', '--warmup', '3', '--flood-every', '3'])).to.throw(UsageError, /exceeds --duration/);
    const o = parseSoakOptions(['--duration', '6', '--warmup', '2', '--flood-every', '2']);
    expect(o).to.include({
      durationMs: 360_000,
      warmupMs: 120_000,
      windowMs: 120_000,
      floodEveryMs: 120_000,
      rate: null,
      logLevel: 'warn',
      retentionMs: null,
    });
  });

  it('--retention-min gives the service a retention in ms, at least one minute', () => {
    expect(parseSoakOptions(['--retention-min', '5'])?.retentionMs).to.equal(300_000);
    expect(() => parseSoakOptions(['--retention-min', '0.5'])).to.throw(UsageError, /retention-min/);
  });
});

describe('bench-soak: the steady stream', () => {
  it("sends a slot of more tasks than the service's batch cap (1,000) as several batches, none over it", async () => {
    const sizes: number[] = [];
    let n = 0;
    const client = {
      request: async (_method: string, _path: string, body?: string): Promise<HttpResult> => {
        const tasks = (JSON.parse(body ?? '{}') as { tasks: unknown[] }).tasks;
        sizes.push(tasks.length);
        return { status: 202, headers: {}, body: JSON.stringify({ tasks: tasks.map(() => ({ task_id: `t${n++}` })) }) };
      },
    } as unknown as HttpClient;
    const counters = { throttled: 0, requests: 0, errors: [] as string[] };
    // 25,000 a second in slots of 100 ms: 2,500 a slot.
    const stream = new SteadyStream(client, new SeqBook(), counters, 25_000, 100, 0, () => undefined);
    stream.start();
    while (stream.slots < 1) await new Promise((r) => setImmediate(r));
    await stream.stop();
    expect(counters.errors).to.deep.equal([]);
    expect(sizes.slice(0, 3)).to.deep.equal([1000, 1000, 500]);
    expect(Math.max(...sizes)).to.equal(1000);
  });
});
