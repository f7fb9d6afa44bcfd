import type { Logger } from 'pino';
import type { HandlerContext, TraceContext } from '../../handlers/types';
import type { WorkItem } from '../protocol';

/** What a handler's {@link AttemptContext} reaches in its runner (one object per runner, shared by its attempts). */
export interface AttemptContextHost {
  /** `ctx.heartbeat()`: a beat soon. */
  heartbeat(): void;
  /** `ctx.log(...)` after the worker's log line: keeps the line with the attempt (while it runs). */
  keepLog(item: WorkItem, message: string, fields: Record<string, unknown> | undefined): void;
  /** `ctx.checkpoint(value)`. */
  checkpoint(item: WorkItem, value: unknown): Promise<void>;
  /** `ctx.progress(value)`. @throws ValidationError for a value that is not progress */
  progress(item: WorkItem, value: unknown): void;
}

/** The runner's side of one attempt that its context reads: its signal and its log, both made on first use. */
export interface AttemptState {
  readonly item: WorkItem;
  /** Whether the attempt was reported (finished or aborted). */
  readonly done: boolean;
  /** The attempt's signal (made when first read). */
  signal(): AbortSignal;
  /** The attempt's child logger (made when first used), or null without a worker log. */
  log(): Logger | null;
}

/** Keys of an {@link AttemptContext}'s own state: symbols, so a proxy of the context still reaches it. */
const STATE = Symbol('attempt');
const HOST = Symbol('host');
const HEARTBEAT = Symbol('heartbeat');
const LOG = Symbol('log');
const CHECKPOINT = Symbol('checkpoint');
const PROGRESS = Symbol('progress');

/**
 * A handler's `ctx` (docs/HANDLERS.md): plain fields for what is known at the start, and the
 * signal and the four functions read through getters on the class. One attempt's context used to
 * be an object literal with a getter and five closures of its own; making it took about 3 µs per
 * attempt in a worker draining no-op tasks (a microbenchmark of the runner, 100,000 attempts,
 * 7.4 → 4.4 µs each without the no-op attempt span, then → 1.3 µs with this class; CPU profile).
 * The functions are made on first read and kept, so `const { log, signal } = ctx` works as before
 * and `ctx.log === ctx.log`; a handler may replace one (`ctx.log = wrapped`, as middleware does).
 * A spread copy (`{ ...ctx }`) has only the plain fields.
 */
export class AttemptContext implements HandlerContext {
  readonly taskId: string;
  readonly attempt: number;
  readonly idempotencyKey: string | null;
  readonly upstreamResults: Record<string, unknown>;
  readonly traceContext: TraceContext | null;
  readonly lastCheckpoint: unknown;
  private readonly [STATE]: AttemptState;
  private readonly [HOST]: AttemptContextHost;
  private [HEARTBEAT]: (() => void) | undefined;
  private [LOG]: HandlerContext['log'] | undefined;
  private [CHECKPOINT]: HandlerContext['checkpoint'] | undefined;
  private [PROGRESS]: HandlerContext['progress'] | undefined;

  constructor(state: AttemptState, traceContext: TraceContext | null, host: AttemptContextHost) {
    const item = state.item;
    this.taskId = item.id;
    this.attempt = item.attempt;
    this.idempotencyKey = item.idempotencyKey;
    this.upstreamResults = item.upstreamResults ?? {};
    this.traceContext = traceContext;
    this.lastCheckpoint = item.lastCheckpoint ?? null;
    this[STATE] = state;
    this[HOST] = host;
    this[HEARTBEAT] = undefined;
    this[LOG] = undefined;
    this[CHECKPOINT] = undefined;
    this[PROGRESS] = undefined;
  }

  /** Aborts on cancellation or timeout; `signal.reason` says which. */
  get signal(): AbortSignal {
    return this[STATE].signal();
  }

  /** Tells the scheduler the handler is alive (extends the attempt's lease). */
  get heartbeat(): () => void {
    const host = this[HOST];
    return (this[HEARTBEAT] ??= () => host.heartbeat());
  }

  set heartbeat(fn: () => void) {
    this[HEARTBEAT] = fn;
  }

  /** An info line with the attempt's fields, kept with the attempt while it runs. */
  get log(): HandlerContext['log'] {
    const state = this[STATE];
    const host = this[HOST];
    return (this[LOG] ??= (message, fields) => {
      state.log()?.info(fields ?? {}, message);
      if (!state.done) host.keepLog(state.item, message, fields);
    });
  }

  set log(fn: HandlerContext['log']) {
    this[LOG] = fn;
  }

  /** Saves a checkpoint for the next attempt (resolves once stored). */
  get checkpoint(): HandlerContext['checkpoint'] {
    const { item } = this[STATE];
    const host = this[HOST];
    return (this[CHECKPOINT] ??= (value) => host.checkpoint(item, value));
  }

  set checkpoint(fn: HandlerContext['checkpoint']) {
    this[CHECKPOINT] = fn;
  }

  /** Reports progress (advisory, at most once a second per attempt). */
  get progress(): HandlerContext['progress'] {
    const { item } = this[STATE];
    const host = this[HOST];
    return (this[PROGRESS] ??= (value) => host.progress(item, value));
  }

  set progress(fn: HandlerContext['progress']) {
    this[PROGRESS] = fn;
  }
}
