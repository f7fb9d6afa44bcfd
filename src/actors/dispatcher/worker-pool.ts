import path from 'node:path';
import { ActorContext, ChildExit, disableRespawn, killChildProcess, spawnForked, superviseChild } from '../runtime/comedy';
import { TimerHandle } from '../../domain/clock';
import { withDeadline } from './deadline';
import { SchedulerDeps } from '../deps';
import { TypedRef } from '../runtime/typed-ref';
import { WorkerHello, WorkerMessages } from '../protocol';
import { DEFAULT_POOL, PoolSpec, workerIdOf } from './pool-specs';
import { LivenessListener } from './liveness-listener';
import { killProcessTree } from '../process-tree';
import { resolveHandlerModules } from '../../handlers/handler-module';
import type { LivenessBeat } from '../liveness-beat';

/** Why a worker process was replaced: it died by itself, or this pool killed it ({@link WorkerPool.kill}). */
export type RestartCause = 'crashed' | 'killed';

/** One worker process as the dispatcher sees it. */
export interface WorkerSlot {
  id: string;
  ref: TypedRef<WorkerMessages>;
  /** Process id from the last `hello`; 0 while the process is down (its exit seen, or killed) until a ping sees the respawn. */
  pid: number;
  /** Free slots the dispatcher may fill. */
  credits: number;
  /**
   * Its last ping went unanswered for `workerPingMs`: the process's event loop is held (a handler
   * computing in synchronous code) or the process is stopped. It gets no new attempt until it
   * answers a ping or reports an attempt: one sent there would only wait behind the handler, past
   * its own timeout, and be charged for it.
   */
  unanswered: boolean;
}

/**
 * Starts and supervises the forked worker actors of one pool (comedy `mode: "forked"`,
 * `onCrash: "respawn"`): `WORKERS` × `WORKER_CONCURRENCY` for the default pool, `processes` ×
 * `concurrency` for one of `workerPools`. A worker never messages its parent unasked while comedy creates it, so
 * the pool asks each one `hello` after creation (bounded by `workerStartTimeoutMs`) and then every
 * `workerPingMs`: a new pid means comedy respawned the process, and `onRestart` is told so the
 * dispatcher can count that worker's attempts as lost (with how the old process exited, when that
 * was seen, and `cause`: whether this pool killed it). Each worker process also beats on the
 * pool's {@link LivenessListener} from a thread of its own; `onAlive` is told of each beat of a
 * current process. Timers use the injected clock.
 */
export class WorkerPool {
  private readonly slots = new Map<string, WorkerSlot>();
  /** Pids this pool killed: a late hello from one of them is not a respawn. */
  private readonly killed = new Set<number>();
  private timer: TimerHandle | null = null;
  /** Retries of respawns that could not fork (superviseChild), cleared at stop. */
  private readonly respawnTimers = new Set<TimerHandle>();
  private stopped = false;
  /** Where the worker processes' liveness threads beat (open from `start` to `stop`). */
  private liveness: LivenessListener | null = null;

  /**
   * @param onRestart a worker process was replaced; its attempts are gone
   * @param options.onAlive a liveness beat of a worker's current process (its attempts' leases may be extended)
   * @param options.onAnswered a worker whose ping went unanswered answered it late: it takes work again
   */
  constructor(
    private readonly deps: Pick<SchedulerDeps, 'clock' | 'config' | 'log' | 'metrics'>,
    private readonly onRestart: (slot: WorkerSlot, exit: ChildExit | null, cause: RestartCause) => void,
    /** The pool's processes and their concurrency (default: the default pool of `config`). */
    readonly spec: Pick<PoolSpec, 'name' | 'processes' | 'concurrency'> = {
      name: DEFAULT_POOL,
      processes: deps.config.workers,
      concurrency: deps.config.workerConcurrency,
    },
    private readonly options: { onAlive?: (slot: WorkerSlot) => void; onAnswered?: (slot: WorkerSlot) => void } = {},
  ) {}

  /** How each worker process that ended exited, by pid (read and forgotten when its respawn is noticed). */
  private readonly exits = new Map<number, ChildExit>();
  /**
   * Workers whose process ended (its exit seen, or killed by this pool) and whose respawn no ping
   * has seen yet, by worker id: the old pid and why it ended. Their slot has pid 0 meanwhile.
   */
  private readonly down = new Map<string, { pid: number; cause: RestartCause }>();

  /** Every worker slot, in start order. */
  all(): IterableIterator<WorkerSlot> {
    return this.slots.values();
  }

  get(id: string): WorkerSlot | undefined {
    return this.slots.get(id);
  }

  /**
   * Forks the workers as children of `parent` and waits for each one's hello.
   * @throws DeadlineExceededError when a worker does not start within `workerStartTimeoutMs`
   */
  async start(parent: ActorContext): Promise<void> {
    const { config, clock } = this.deps;
    const modulePath = path.join(__dirname, '..', 'worker', 'worker-actor.js');
    this.liveness = await LivenessListener.open((beat) => this.beat(beat), this.deps.log);
    for (let i = 0; i < this.spec.processes; i++) {
      const id = workerIdOf(this.spec.name, i);
      const created = spawnForked(parent, modulePath, id, {
        workerId: id,
        concurrency: this.spec.concurrency,
        handlers: resolveHandlerModules(config),
        orphanAfterMs: orphanAfterMs(config.workerPingMs),
        maxResultBytes: config.maxResultBytes,
        heartbeatMs: Math.max(100, Math.floor(config.leaseMs / 3)),
        livenessAddress: this.liveness.address,
        logLevel: config.logLevel,
        tracesExporter: config.tracesExporter,
        otlpTracesEndpoint: config.otlpTracesEndpoint,
        tracesExportDelayMs: config.tracesExportDelayMs,
      });
      const ref = new TypedRef<WorkerMessages>(await withDeadline(created, config.workerStartTimeoutMs, clock, `${id} (start)`));
      superviseChild(ref.ref, {
        exited: (exit) => this.exited(id, exit),
        respawnFailed: (err, failures, retryInMs) =>
          this.deps.log.error(
            { worker_id: id, err, failures, retry_in_ms: retryInMs },
            'worker process could not be started again; will try again',
          ),
        processError: (err) => this.deps.log.warn({ worker_id: id, err }, 'worker process error'),
        later: (fn, ms) => {
          if (this.stopped) return; // no respawn after stop: nothing to hold the process open for
          const timer = this.deps.clock.setTimeout(() => {
            this.respawnTimers.delete(timer);
            fn();
          }, ms);
          this.respawnTimers.add(timer);
        },
      });
      const hello = await withDeadline(ref.ask('hello', null), config.workerStartTimeoutMs, clock, `${id} (hello)`);
      this.slots.set(id, { id, ref, pid: hello.pid, credits: hello.credits, unanswered: false });
    }
    this.schedulePing();
  }

  /**
   * Kills a worker process that cannot stop by itself (a handler stuck in synchronous code past its
   * timeout and grace; attempts still running when a stop's grace ends), with the processes its
   * handlers started (process-tree.ts). The slot takes no work until the respawned process answers
   * a ping.
   */
  kill(slot: WorkerSlot, reason: string): void {
    const { log, metrics } = this.deps;
    if (slot.pid > 0) {
      this.killed.add(slot.pid);
      this.down.set(slot.id, { pid: slot.pid, cause: 'killed' });
      const below = killProcessTree(slot.pid);
      log.warn({ worker_id: slot.id, pid: slot.pid, reason, ...(below.length > 0 ? { child_pids: below } : {}) }, 'killing worker process');
      metrics.workerKills.inc({ worker_id: slot.id });
    } else {
      log.warn({ worker_id: slot.id, pid: slot.pid, reason }, 'killing worker process');
    }
    slot.pid = 0;
    slot.credits = 0;
  }

  /**
   * Stops the supervision pings (workers then exit by themselves after `orphanAfterMs` of silence,
   * see the worker actor), closes the liveness listener and switches respawn off.
   */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const t of this.respawnTimers) this.deps.clock.clearTimeout(t);
    this.respawnTimers.clear();
    this.disableRespawn();
    void this.liveness?.close();
    this.liveness = null;
  }

  /**
   * Switches comedy's respawn off for every worker (shutdown): comedy 2.1.7 would otherwise
   * respawn a worker that exits during destroy, and retry every 15 s after a failed respawn.
   */
  disableRespawn(): void {
    for (const slot of this.slots.values()) disableRespawn(slot.ref.ref);
  }

  /** Kills worker processes still alive after the actor system was destroyed (comedy internals). */
  killLeftovers(): void {
    for (const slot of this.slots.values()) killChildProcess(slot.ref.ref);
  }

  /**
   * The process of worker `id` exited. When it was the slot's current process, the slot goes down
   * at once (pid 0: no attempt is sent to it) rather than at the next ping: comedy respawns the
   * process behind the same actor reference, and a `run` sent meanwhile would start in the new
   * process attempts that the ping then counts lost and runs again, twice in all. The ping that
   * sees the new pid brings the slot back and tells the dispatcher its attempts are lost.
   */
  private exited(id: string, exit: ChildExit): void {
    this.exits.set(exit.pid, exit);
    if (this.exits.size > 64) this.exits.delete(this.exits.keys().next().value as number);
    const slot = this.slots.get(id);
    if (!slot || slot.pid !== exit.pid || this.stopped) return;
    this.down.set(id, { pid: exit.pid, cause: 'crashed' });
    slot.pid = 0;
    slot.credits = 0;
  }

  /** A liveness beat: told on only for the current process of one of this pool's workers. */
  private beat(beat: LivenessBeat): void {
    const slot = this.slots.get(beat.workerId);
    if (!this.stopped && slot && slot.pid === beat.pid) this.options.onAlive?.(slot);
  }

  /**
   * Marks `slot` as answering pings or not ({@link WorkerSlot.unanswered}), with a log line at
   * each change: the first when a handler holds its process's loop past a ping.
   */
  unanswered(slot: WorkerSlot, held: boolean): void {
    if (slot.unanswered === held) return;
    slot.unanswered = held;
    if (held)
      this.deps.log.warn(
        { worker_id: slot.id, pid: slot.pid },
        'worker process did not answer its ping (a handler holding its event loop, or the process stopped); no new attempts go to it until it answers',
      );
    else this.deps.log.info({ worker_id: slot.id, pid: slot.pid }, 'worker process answers again');
  }

  private schedulePing(): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => void this.ping(), this.deps.config.workerPingMs);
  }

  private async ping(): Promise<void> {
    const { clock, config, log, metrics } = this.deps;
    // Its socket file removed under it: listening again before a respawned worker needs it.
    await this.liveness?.heal();
    await Promise.all(
      [...this.slots.values()].map(async (slot) => {
        let hello: WorkerHello;
        const asked = slot.ref.ask('hello', null);
        try {
          hello = await withDeadline(asked, config.workerPingMs, clock, `${slot.id} (ping)`);
        } catch {
          // Held (a handler in synchronous code), stopped, or crashed and not yet respawned (the
          // next ping sees the new process): no new work goes there meanwhile. Its late answer
          // ends that at once (the loop turns again; or the clock moved past the deadline while
          // the answer was on its way: a step of the wall clock, a test's manual clock).
          if (slot.pid !== 0 && !this.stopped) {
            const pid = slot.pid;
            this.unanswered(slot, true);
            asked.then(
              (late) => {
                if (!this.stopped && late.pid === pid && slot.pid === pid && slot.unanswered) {
                  this.unanswered(slot, false);
                  this.options.onAnswered?.(slot);
                }
              },
              () => undefined,
            );
          }
          return;
        }
        if (hello.pid === slot.pid) this.unanswered(slot, false);
        if (this.stopped || hello.pid === slot.pid || this.killed.has(hello.pid)) return;
        const down = this.down.get(slot.id);
        if (hello.pid === down?.pid) return; // the old process answered before it died
        const oldPid = down?.pid ?? slot.pid;
        const cause: RestartCause = down?.cause ?? 'crashed';
        metrics.workerRestarts.inc({ worker_id: slot.id });
        log.warn({ worker_id: slot.id, pid: hello.pid, old_pid: oldPid, cause }, 'worker process restarted; its attempts are lost');
        const exit = this.exits.get(oldPid) ?? null;
        this.exits.delete(oldPid);
        this.down.delete(slot.id);
        slot.pid = hello.pid;
        slot.credits = hello.credits;
        slot.unanswered = false;
        this.onRestart(slot, exit, cause);
      }),
    );
    this.schedulePing();
  }
}

/**
 * How long a worker waits without hearing from the dispatcher before it exits (ms): ten ping
 * intervals, at least 10 s. The dispatcher pings every `workerPingMs` while the service runs.
 */
export function orphanAfterMs(workerPingMs: number): number {
  return Math.max(10_000, 10 * workerPingMs);
}
