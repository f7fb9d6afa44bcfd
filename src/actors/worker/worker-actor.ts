import { guardProcessSend } from './ipc-guard';
import { ActorContext, customParameters, parentOf } from '../runtime/comedy';
import { SystemClock } from '../../domain/clock';
import { loadHandlersOrFailing } from '../../handlers/registry';
import type { HandlerModuleRef } from '../../handlers/handler-module';
import { TypedRef } from '../runtime/typed-ref';
import { WorkerHello, WorkerToDispatcher, WorkItem } from '../protocol';
import { TaskRunner } from './task-runner';
import { startLivenessThread } from './liveness-thread';
import { killOwnDescendants } from '../process-tree';
import pino from 'pino';
import { registerTracing, TracesExporter, TracingHandle } from '../../observability/tracing';

interface WorkerParams {
  workerId: string;
  concurrency: number;
  /** The configured handler modules, located by the service (absolute files). */
  handlers: HandlerModuleRef[];
  /** Exit after this long (ms) without any message from the dispatcher. */
  orphanAfterMs: number;
  /** Largest handler result kept (bytes of JSON); a larger one fails `result_too_large`. */
  maxResultBytes: number;
  /** Interval of the liveness beats (ms). */
  heartbeatMs: number;
  /** The dispatcher's liveness listener (null or absent: beats from this loop, while attempts run). */
  livenessAddress?: string | null;
  /** pino level of the worker's log (the service's `logLevel`). */
  logLevel: string;
  /** Attempt span exporter (`tracesExporter`), its OTLP URL and delay between exports (ms). */
  tracesExporter: TracesExporter;
  otlpTracesEndpoint: string | null;
  tracesExportDelayMs?: number;
}

/**
 * A worker actor (comedy `mode: "forked"`, `onCrash: "respawn"`): runs handlers in its own process
 * up to its concurrency. Its `hello` answer grants its slots as credits to the dispatcher (its
 * parent) and carries its pid, by which the dispatcher notices a respawn. It reports finished
 * attempts in batches; each reported attempt returns one credit. Loaded by module path in the
 * child process.
 */
class WorkerActor {
  private runner: TaskRunner | null = null;
  private params: WorkerParams | null = null;
  /** This process's tracer provider (null: `tracesExporter` none). */
  private tracing: TracingHandle | null = null;
  /** When the dispatcher last sent anything (epoch ms). */
  private lastHeard = 0;
  /** The dispatcher has asked `hello`: comedy's creation is over, so this worker may message it. */
  private greeted = false;
  /** This process's log (set by `initialize`). */
  private log: pino.Logger | null = null;
  /** Worker processes run handlers against real time. */
  private readonly clock = new SystemClock();

  async initialize(self: ActorContext): Promise<void> {
    // Ctrl-C reaches the whole process group, and comedy's child system exits on it. Shutdown is
    // the service's call: it lets running attempts finish (shutdownGraceMs) and then destroys the
    // workers; a worker that died on the signal would be respawned mid-shutdown, its attempts lost.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => undefined);
    }
    // The IPC channel closes the moment the service process dies (kill -9, OOM). Its attempts are
    // lost and will run again after restart, so stop at once: comedy alone would notice only at its
    // next parent ping (≈ 5 s), and side effects of both runs would overlap. What the handlers
    // started themselves goes first: re-parented, it would go on beside the retries.
    process.once('disconnect', () => leave());

    const p = customParameters<WorkerParams>(self);
    const clock = this.clock;
    // A worker whose dispatcher went silent (its actor system destroyed while comedy was
    // respawning this process) would otherwise live on and keep the service's process open.
    // A handler computing for a while holds this loop, and the dispatcher's pings wait in the
    // channel meanwhile: a check that runs late counts the silence again from now.
    this.lastHeard = clock.now();
    const every = Math.max(1000, p.orphanAfterMs / 4);
    let due = clock.now();
    const watch = () => {
      const now = clock.now();
      if (now - due > 1000) this.lastHeard = Math.max(this.lastHeard, now);
      else if (now - this.lastHeard > p.orphanAfterMs) leave();
      due = now + every;
      clock.setTimeout(watch, every);
    };
    watch();
    const parent = new TypedRef<WorkerToDispatcher>(parentOf(self));
    this.params = p;
    this.tracing = registerTracing(p.tracesExporter ?? 'none', {
      otlpEndpoint: p.otlpTracesEndpoint ?? null,
      ...(p.tracesExportDelayMs !== undefined ? { exportDelayMs: p.tracesExportDelayMs } : {}),
      global: true,
    });
    // Same shape as the service's log lines; each attempt's lines add task_id, attempt, trace_id.
    const log = pino({ level: p.logLevel ?? 'info', base: { service: 'scheduler', worker_id: p.workerId, pid: process.pid } });
    this.log = log;
    // A promise a handler leaves unawaited that rejects later (a bug in the handler, such as a call
    // it forgot to await) is not any attempt's outcome: that is the promise the handler returned.
    // By Node's default (`--unhandled-rejections=throw`) it would kill this process and with it
    // every attempt it runs (up to its concurrency, all retried as `worker_lost`), and the buggy
    // task's own retries would do it again each time. So it is logged, and the process goes on.
    // A synchronous throw outside any handler's promise (an `uncaughtException`) still ends the
    // process, as Node advises: comedy respawns it and its attempts are retried.
    // The listener is process-wide: a rejection left unhandled by code of ours lands here too,
    // which is why the line does not blame a handler for certain.
    // The dispatcher counts them (`scheduler_worker_unhandled_rejections_total`), told only once it
    // has spoken to this worker: a message while comedy creates it would pass for the handshake.
    process.on('unhandledRejection', (reason) => {
      log.error(
        { err: reason },
        'unhandled promise rejection in this worker process (most likely a handler that did not await a promise); the worker goes on',
      );
      if (this.greeted) parent.tell('unhandledRejection', { workerId: p.workerId, pid: process.pid });
    });
    // Before any handler module loads: a handler's `process.send(null)` would end the service.
    guardProcessSend();
    // Handler modules load with `import()` (ES modules and CommonJS alike); comedy waits for this.
    const handlers = await loadHandlersOrFailing(p.handlers ?? []);
    this.runner = new TaskRunner(
      handlers,
      (results) => parent.tell('completed', { workerId: p.workerId, pid: process.pid, results }),
      clock,
      {
        maxResultBytes: p.maxResultBytes,
        log,
        checkpoint: (taskId, attempt, value) =>
          parent.ask('checkpoint', { workerId: p.workerId, pid: process.pid, taskId, attempt, value }),
        progress: (reports) => parent.tell('progress', { workerId: p.workerId, pid: process.pid, reports }),
        logs: (logs) => parent.tell('logs', { workerId: p.workerId, pid: process.pid, logs }),
        settled: (attempts) => parent.tell('settled', { workerId: p.workerId, pid: process.pid, attempts }),
      },
    );
    const heartbeat = (attempts: Array<{ id: string; attempt: number }>) =>
      parent.tell('heartbeat', { workerId: p.workerId, pid: process.pid, attempts });
    if (p.livenessAddress) {
      // Liveness comes from a thread of its own, so a handler that keeps this loop busy (computing
      // up to its timeout) is not taken for a dead process; `ctx.heartbeat()` still reports at once.
      const thread = { address: p.livenessAddress, workerId: p.workerId, intervalMs: p.heartbeatMs, parentPid: process.ppid };
      startLivenessThread(thread, (err) => log.error({ err }, 'the liveness thread failed; the leases of this worker will expire'));
      this.runner.heartbeatsOnRequest(heartbeat);
    } else this.runner.startHeartbeats(p.heartbeatMs, heartbeat);
  }

  hello(): WorkerHello {
    this.lastHeard = this.clock.now();
    this.greeted = true;
    const p = this.params as WorkerParams;
    return { workerId: p.workerId, pid: process.pid, credits: p.concurrency };
  }

  run(msg: { tasks: WorkItem[]; pid: number }): void {
    this.lastHeard = this.clock.now();
    if (msg.pid !== process.pid) {
      // Sent to the process this one replaced: the dispatcher counts these attempts lost when it
      // sees this pid, and runs them again; starting them here too would run each one twice.
      this.log?.warn(
        { count: msg.tasks.length, meant_for_pid: msg.pid },
        'run message meant for an earlier process of this worker; not started',
      );
      return;
    }
    this.runner?.run(msg.tasks);
  }

  abort(msg: { taskId: string; attempt: number }): void {
    this.runner?.abort(msg.taskId, msg.attempt);
  }

  /**
   * comedy hook when the service destroys its actors (graceful stop, after its grace): the
   * attempt spans still queued are exported, and the processes the handlers started are killed,
   * as the attempts cut off are retried after the restart.
   */
  async destroy(): Promise<void> {
    await this.tracing?.shutdown().catch(() => undefined);
    killOwnDescendants();
  }
}

/** Ends this worker process on its own (the service is gone), with what its handlers started. */
function leave(): never {
  killOwnDescendants();
  process.exit(0);
}

export = WorkerActor;
