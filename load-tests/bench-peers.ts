/**
 * Peer comparison benchmark: the same no-op scenarios on our service, BullMQ (Redis), Agenda
 * (its Redis backend), graphile-worker and pg-boss (PostgreSQL), on the same machine in the same
 * run, with the ratios ours ÷ peer.
 *
 *   backlog: N jobs enqueued while nothing consumes them (enqueue rate), then drained (processing rate);
 *   e2e:     N jobs enqueued while the consumer runs; first enqueue → last completion;
 *   herd:    H jobs due at the same instant; how late each started (p50/p99/max), none early.
 *
 * Usage: npm run build && node dist/load-tests/bench-peers.js [--quick] [--help]
 * Redis: REDIS_URL, or a private redis-server started here (no persistence). PostgreSQL:
 * POSTGRES_URL, or a private cluster started here (initdb, default durability). Settings and
 * figures: load-tests/README.md. Speed is reported, never asserted: the exit code is 0 when
 * every scenario ran, 1 when one failed, 2 on bad arguments. The code is in load-tests/peers/.
 */
import { mainPeers } from './peers/run-peers';

mainPeers().then(
  (code) => {
    process.exitCode = code;
    // ioredis, Agenda and the pg pools may keep timers alive after close; the results are written.
    setTimeout(() => process.exit(code), 2000).unref();
  },
  (err) => {
    process.stderr.write(`bench-peers failed: ${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  },
);
