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

/**
 * Calls `listener` each time a process of the forked child `ref` exits: the one running now and
 * every one comedy respawns after it. comedy 2.1.7 forks in its parent's `_createForkedWorker`
 * (also on respawn) and keeps the process in `workerProcess`, deleting it on exit; the method is
 * wrapped on this instance so that each new process is watched once its creation is over (a
 * process that dies while being created is never answered by comedy either).
 */
export function onChildExit(ref: unknown, listener: (exit: ChildExit) => void): void {
  type Proc = { pid?: number; once(event: 'exit', l: (code: number | null, signal: string | null) => void): void };
  // createChild answers a ClientActorProxy; the ForkedActorParent that owns the process is inside.
  const proxy = ref as { getWrapped?: () => unknown };
  const inner = typeof proxy.getWrapped === 'function' ? proxy.getWrapped() : ref;
  const parent = inner as { workerProcess?: Proc; _createForkedWorker?: () => Promise<unknown> };
  const watched = new WeakSet<Proc>();
  const watch = () => {
    const proc = parent.workerProcess;
    if (!proc || watched.has(proc)) return;
    watched.add(proc);
    const pid = proc.pid ?? 0;
    proc.once('exit', (code, signal) => listener({ pid, code, signal }));
  };
  const create = parent._createForkedWorker;
  if (typeof create !== 'function') return;
  parent._createForkedWorker = function (this: unknown) {
    const created = create.call(this);
    void created.then(watch, () => undefined);
    return created;
  };
  watch();
}
