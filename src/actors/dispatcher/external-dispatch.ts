import { externalQueueSpecs, type ExternalQueueSpec } from '../../domain/external-queues';
import type { DueEntry } from '../../domain/task';
import type { ExternalCompletion, ExternalCompletionResult, LeasedAttempt, LeaseRequest } from '../../services/ports';
import type { AttemptCompletion, CompletionResult } from '../../storage/store';
import type { SchedulerDeps } from '../deps';
import type { RemotePull } from '../protocol';
import { ExternalAttempts } from './external-attempts';
import { ExternalLanes } from './external-lanes';
import { PullLanes } from './pull-lanes';

/** What the external queues need from the dispatcher that owns them. */
export interface ExternalDispatchHooks {
  /** Records completions through the dispatcher's path. @returns the store's results, or null when the write failed */
  record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null>;
  /** Dispatches again. */
  pump(): void;
  /** True while the completion of this attempt is kept in memory for the store: its lease is not lost. */
  unwritten(taskId: string, attempt: number): boolean;
}

/**
 * The external queues of the dispatcher (config `externalQueues`), whatever their transport: the
 * Redis stream queues ({@link ExternalLanes}, when the service has a stream client), the HTTP pull
 * queues ({@link PullLanes}), and what their attempts share ({@link ExternalAttempts}: consumers'
 * completions, cancels, the lease sweep). The dispatcher calls this one object for all of them.
 */
export class ExternalDispatch {
  private readonly streams: ExternalLanes | null;
  private readonly pull: PullLanes | null;
  private readonly attempts: ExternalAttempts;

  /** @returns null when no external queue is served here (none configured, or only stream queues without a stream client) */
  static create(deps: SchedulerDeps, hooks: ExternalDispatchHooks): ExternalDispatch | null {
    const specs = [...externalQueueSpecs(deps.config).values()];
    const streamSpecs = deps.streams ? specs.filter((q) => q.transport === 'stream') : [];
    const pullSpecs = specs.filter((q) => q.transport === 'http');
    if (streamSpecs.length === 0 && pullSpecs.length === 0) return null;
    return new ExternalDispatch(deps, hooks, streamSpecs, pullSpecs);
  }

  private constructor(
    private readonly deps: SchedulerDeps,
    hooks: ExternalDispatchHooks,
    streamSpecs: ExternalQueueSpec[],
    pullSpecs: ExternalQueueSpec[],
  ) {
    const { record, pump } = hooks;
    const streams =
      deps.streams && streamSpecs.length > 0
        ? new ExternalLanes(deps, deps.streams, new Map(streamSpecs.map((q) => [q.name, q])), { record, pump })
        : null;
    this.streams = streams;
    this.attempts = new ExternalAttempts(deps, [...streamSpecs, ...pullSpecs], {
      record,
      pump,
      unwritten: hooks.unwritten,
      ...(streams ? { afterSweep: () => streams.reclaimStale() } : {}),
    });
    this.pull =
      pullSpecs.length > 0
        ? new PullLanes(deps, pullSpecs, { record, pump, cancel: (taskId, attempt) => this.attempts.cancel(taskId, attempt) })
        : null;
  }

  /**
   * Creates the streams' consumer groups, counts the pull attempts a previous process left out
   * (embedded mode, {@link PullLanes.adoptRunning}; a store error there is logged, not thrown),
   * then starts the lease sweep. @throws when Redis fails
   */
  async start(): Promise<void> {
    await this.streams?.start();
    if (this.pull)
      await this.pull
        .adoptRunning()
        .catch((err: unknown) =>
          this.deps.log.warn({ err }, 'reading the pull attempts still out failed: maxInFlight counts only those handed out from now on'),
        );
    this.attempts.start();
  }

  /** Stops the sweep and answers waiting lease requests `[]` (the dispatcher is being destroyed). */
  stop(): void {
    this.streams?.stop();
    this.attempts.stop();
    this.pull?.close();
  }

  /** Stops handing out to pull workers: waiting lease requests are answered `[]` (drain). */
  drain(): void {
    this.pull?.close();
  }

  /** True when the entry's queue is an external queue served here (it must be {@link add}ed here). */
  handles(entry: DueEntry): boolean {
    return (this.pull?.handles(entry) ?? false) || (this.streams?.handles(entry) ?? false);
  }

  /** Queues a ready task of an external queue. */
  add(entry: DueEntry): void {
    if (this.pull?.handles(entry)) this.pull.add(entry);
    else this.streams?.add(entry);
  }

  /** Hands out ready tasks (to the streams; to waiting lease requests). @returns the next bucket release (epoch ms), or null */
  pump(now: number): number | null {
    const a = this.streams?.pump(now) ?? null;
    const b = this.pull?.pump(now) ?? null;
    return a === null ? b : b === null ? a : Math.min(a, b);
  }

  /** Per queue: ready tasks, attempts out, lease requests waiting (stats). */
  stats(): Array<{ queue: string; ready: number; inFlight: number; waiting: number }> {
    return [...(this.streams?.stats().map((q) => ({ ...q, waiting: 0 })) ?? []), ...(this.pull?.stats() ?? [])];
  }

  /** A consumer's completion (see {@link ExternalAttempts.complete}). */
  complete(c: ExternalCompletion): Promise<ExternalCompletionResult> {
    return this.attempts.complete(c);
  }

  /** A pull worker's lease request (see {@link PullLanes.lease}); `[]` when there is no pull queue. */
  lease(req: LeaseRequest): Promise<LeasedAttempt[]> {
    return this.pull ? this.pull.lease(req) : Promise.resolve([]);
  }

  /** The client of a lease request went away. */
  leaveLease(waiterId: string): void {
    this.pull?.leave(waiterId);
  }

  /** Another node's pull traffic (see {@link PullLanes.remote}); ignored without pull queues. */
  remotePull(msg: RemotePull): void {
    this.pull?.remote(msg);
  }

  /** Attempts whose lease answer never reached its client (see {@link PullLanes.undelivered}). */
  leaseUndelivered(attempts: ReadonlyArray<{ taskId: string; attempt: number }>): Promise<void> {
    return this.pull ? this.pull.undelivered(attempts) : Promise.resolve();
  }

  /** Cancel of a running external attempt handed out here. @returns false when it is not one of them */
  abort(msg: { taskId: string; attempt: number }): boolean {
    return (this.streams?.abort(msg) ?? false) || (this.pull?.abort(msg) ?? false);
  }

  /** These attempts ended: their in-flight places are freed (and their stream entries deleted). */
  settled(completions: ReadonlyArray<{ taskId: string; attempt: number }>): void {
    this.streams?.settled(completions);
    this.pull?.settled(completions);
  }
}
