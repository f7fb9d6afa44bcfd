/**
 * The one module that knows comedy (2.1.7, the actor library): its system, its actor context and
 * references, and the internals the scheduler has to reach (signal handlers, a forked child's
 * respawn switch and process). Owners, the dispatcher and the supervisor use only what this
 * module and `typed-ref.ts` export, so comedy can be replaced by another runtime (a
 * `child_process`/`worker_threads` pool) here without touching them.
 */
import path from 'node:path';
import * as comedy from 'comedy';

/**
 * How long a forked child waits for its parent's answer to comedy's own parent ping (ms): the
 * longest timer delay (about 24.8 days, more than any task timeout). comedy pings from the child's
 * event loop and destroys the child when an answer is late (15 s by default), so an answer waiting
 * behind a handler that computes longer would end the worker process and every attempt in it. A
 * worker notices its parent's death through its IPC channel's `disconnect` instead (worker-actor.ts).
 */
const PARENT_PING_TIMEOUT_MS = 2_147_483_647;

/** What an actor is handed at `initialize`: its children, its parent, its custom parameters. */
export type ActorContext = comedy.Actor;

/** A reference to a running actor (send, sendAndReceive). */
export type ActorRef = comedy.ActorRef;

/** A running actor system: its root actor and how to end it. */
export interface ActorSystem {
  rootActor(): Promise<ActorContext>;
  destroy(): Promise<void>;
}

/**
 * Starts a comedy actor system with `resources` (comedy resource definition classes) and the pino
 * logger adapter at `logLevel`, its forked children's parent ping relaxed
 * ({@link PARENT_PING_TIMEOUT_MS}). comedy's own SIGINT/SIGTERM handlers (which call process.exit)
 * are removed: the service decides how to shut down.
 */
export function createActorSystem(resources: Array<new () => unknown>, logLevel: string): ActorSystem {
  const system = comedy.createSystem({
    resources,
    logger: '/' + path.join(__dirname, 'comedy-logger.js'),
    loggerParams: { level: logLevel },
    pingTimeout: PARENT_PING_TIMEOUT_MS,
    config: {},
  } as never);
  const handlers = system as unknown as { sigintHandler?: () => void; sigtermHandler?: () => void };
  if (handlers.sigintHandler) process.removeListener('SIGINT', handlers.sigintHandler);
  if (handlers.sigtermHandler) process.removeListener('SIGTERM', handlers.sigtermHandler);
  return system;
}

/**
 * Switches the respawn of a forked child off (shutdown): comedy 2.1.7 would otherwise respawn a
 * worker that exits during destroy, and retry every 15 s after a failed respawn.
 */
export function disableRespawn(ref: unknown): void {
  const parent = forkedParentOf(ref) as { additionalOptions?: { onCrash?: string } };
  if (parent.additionalOptions) parent.additionalOptions.onCrash = 'none';
}

/** Kills the process of a forked child still alive after its actor system was destroyed. */
export function killChildProcess(ref: unknown): void {
  const proc = (forkedParentOf(ref) as { workerProcess?: { connected?: boolean; kill(s: string): void } }).workerProcess;
  if (proc?.connected) proc.kill('SIGKILL');
}

/**
 * comedy hands out a `ClientActorProxy` around the forked child's parent side (the object that
 * holds its options and process): that object, reached through `getWrapped()`, or `ref` itself.
 */
function forkedParentOf(ref: unknown): unknown {
  const proxy = ref as { getWrapped?: () => unknown };
  return typeof proxy.getWrapped === 'function' ? proxy.getWrapped() : ref;
}

/**
 * Starts `actor` (a class, or a definition object) as a child of `parent` in this process.
 * @param params what the child reads at `initialize` ({@link customParameters})
 */
export function spawnLocal(parent: ActorContext, actor: unknown, name: string, params?: Record<string, unknown>): Promise<ActorRef> {
  return parent.createChild(actor as never, { mode: 'in-memory', name, ...(params ? { customParameters: params } : {}) });
}

/**
 * Starts the actor module at `modulePath` (an absolute path to its compiled `.js`) as a child of
 * `parent` in a forked process, respawned when the process dies.
 * @param params what the child reads at `initialize` ({@link customParameters}); JSON only
 */
export function spawnForked(parent: ActorContext, modulePath: string, name: string, params: Record<string, unknown>): Promise<ActorRef> {
  return parent.createChild('/' + modulePath, { mode: 'forked', onCrash: 'respawn', name, customParameters: params } as never);
}

/** The custom parameters an actor was started with ({@link spawnLocal}, {@link spawnForked}). */
export function customParameters<T>(self: ActorContext): T {
  return self.getCustomParameters() as T;
}

/** The reference to an actor's parent. */
export function parentOf(self: ActorContext): ActorRef {
  return self.getParent() as unknown as ActorRef;
}

/** How a forked child's process ended: the ChildProcess `exit` event's code and signal. */
export interface ChildExit {
  pid: number;
  /** Exit code (null when a signal ended it). */
  code: number | null;
  /** The signal that ended it (null when it exited by itself). */
  signal: string | null;
}

/** What {@link superviseChild} tells its caller about a forked child's processes. */
export interface ChildWatch {
  /** A process of the child exited (the one running now, or one respawned after it). */
  exited(exit: ChildExit): void;
  /**
   * A respawn failed: the fork itself (EMFILE or ENFILE at the open-files limit, EAGAIN at the
   * process limit, ENOMEM) or the child's creation. It is tried again after `retryInMs`.
   * @param failures the failed tries in a row, from 1
   */
  respawnFailed(err: Error, failures: number, retryInMs: number): void;
  /** An `error` event of a running process (a signal or a message that could not be delivered). */
  processError(err: Error): void;
  /** Runs `fn` after `ms` (the caller's clock). */
  later(fn: () => void, ms: number): void;
}

/**
 * Wait before the next try of a failed respawn (ms): 1 s doubling to 15 s (comedy's own wait),
 * so a limit freed soon is noticed soon and one never freed costs a log line per 15 s.
 */
export function respawnRetryMs(failures: number): number {
  return Math.min(15_000, 1_000 * 2 ** Math.min(4, Math.max(0, failures - 1)));
}

type ChildProc = {
  pid?: number;
  once(event: 'exit', l: (code: number | null, signal: string | null) => void): void;
  on(event: 'error', l: (err: Error) => void): void;
};
type ForkedParent = {
  workerProcess?: ChildProc;
  _createForkedWorker?: () => PromiseLike<unknown>;
  additionalOptions?: { onCrash?: string };
  getState?: () => string;
};

/**
 * Supervises the processes of the forked child `ref` after its start: `watch.exited` for each one
 * that exits (the one running now and every one comedy respawns), and respawns that cannot fork
 * retried rather than ending the service.
 *
 * comedy 2.1.7 forks in its parent's `_createForkedWorker` (also on respawn), keeps the process in
 * `workerProcess` (deleted on exit), and listens for the process's `error` event only after an
 * asynchronous step. A fork that fails (EMFILE at the open-files limit) emits `error` before that:
 * an `error` event with no listener ends the process, so the service died with its worker. This
 * wraps `_createForkedWorker` on this instance: each try first puts a one-shot setter on
 * `workerProcess` that adds an `error` listener to the new process as comedy stores it, then waits
 * for comedy's creation or that error. A failed try is told to `watch.respawnFailed` and tried
 * again after {@link respawnRetryMs} for as long as respawn stays on ({@link disableRespawn});
 * comedy hears of success only (and logs it), never of a failure, whose own retry (once, after
 * 15 s) would end in an unhandled rejection.
 */
export function superviseChild(ref: unknown, watch: ChildWatch): void {
  const parent = forkedParentOf(ref) as ForkedParent;
  const create = parent._createForkedWorker;
  if (typeof create !== 'function') return;
  const watched = new WeakSet<ChildProc>();
  const watchExit = () => {
    const proc = parent.workerProcess;
    if (!proc || watched.has(proc)) return;
    watched.add(proc);
    const pid = proc.pid ?? 0;
    proc.once('exit', (code, signal) => watch.exited({ pid, code, signal }));
  };
  const respawning = () => parent.additionalOptions?.onCrash === 'respawn' && !/^destroy/.test(parent.getState?.() ?? '');
  parent._createForkedWorker = function () {
    return new Promise<void>((resolve) => {
      let failures = 0;
      const attempt = () => {
        if (!respawning()) return; // shutting down: comedy waits on, holding nothing
        const trap = trapForkError(parent, watch);
        const created = Promise.resolve(create.call(parent));
        Promise.race([created, trap.failed]).then(
          () => {
            trap.settled();
            watchExit();
            resolve();
          },
          (err: unknown) => {
            created.then(undefined, () => undefined);
            // comedy's own failure (its `send` on the unforked process) comes before the fork's
            // `error`, which is already on the next-tick queue: read it from there.
            process.nextTick(() => {
              const cause = trap.settled() ?? (err instanceof Error ? err : new Error(String(err)));
              failures += 1;
              const retryInMs = respawnRetryMs(failures);
              watch.respawnFailed(cause, failures, retryInMs);
              watch.later(attempt, retryInMs);
            });
          },
        );
      };
      attempt();
    });
  };
  parent.workerProcess?.on('error', (err: Error) => watch.processError(err));
  watchExit();
}

/**
 * Puts a one-shot setter on `parent.workerProcess`: the process comedy stores there next gets an
 * `error` listener at once (before the failed fork's `error`, emitted on the next tick), and the
 * property becomes a plain one again (comedy deletes it on exit). `failed` rejects with an `error`
 * of that process until `settled()` is called (which answers the first such error, or null);
 * errors after that go to `watch.processError`.
 */
function trapForkError(parent: ForkedParent, watch: Pick<ChildWatch, 'processError'>): { failed: Promise<never>; settled(): Error | null } {
  let creating = true;
  let first: Error | null = null;
  let reject: (err: Error) => void = () => undefined;
  const failed = new Promise<never>((_resolve, rej) => {
    reject = rej;
  });
  const fail = (err: Error) => {
    first ??= err;
    reject(err);
  };
  Object.defineProperty(parent, 'workerProcess', {
    configurable: true,
    enumerable: true,
    get: () => undefined,
    set(proc: ChildProc | undefined) {
      Object.defineProperty(parent, 'workerProcess', { value: proc, writable: true, configurable: true, enumerable: true });
      proc?.on('error', (err: Error) => (creating ? fail(err) : watch.processError(err)));
    },
  });
  return {
    failed,
    settled: () => {
      creating = false;
      return first;
    },
  };
}
