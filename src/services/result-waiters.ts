import type { Clock, TimerHandle } from '../domain/clock';
import { TooManyWaitersError } from '../domain/errors';
import type { TaskEnds, TaskEndSubscriber } from './ports';

/** What {@link ResultWaiters} needs: the clock, the node's end events, limits and two batched reads. */
export interface ResultWaitersOptions {
  /** The injected clock: timeouts and the re-check interval. */
  clock: Clock;
  /** This node's "task ended" events (the fast path). */
  events: TaskEndSubscriber;
  /** Most waiters held at once; one more is refused with {@link TooManyWaitersError}. */
  maxWaiters: number;
  /**
   * Interval (ms) of the re-check: while anyone waits, the ids of every waiting task and workflow
   * are read in one batch each, and those that ended wake their waiters. It catches the ends this
   * node is not told about (another node's, a task cancelled by its workflow or its upstream).
   */
  recheckMs: number;
  /** Of `ids`, the tasks that are terminal now or no longer exist (one batched read). */
  endedTasks(ids: string[]): Promise<Set<string>>;
  /** Of `ids`, the workflows that are terminal now or no longer exist. */
  endedWorkflows(ids: string[]): Promise<Set<string>>;
  /** A failed re-check (it runs again at the next interval). */
  onError?(err: unknown): void;
}

/** One long poll: what it waits for and how to read it. */
export interface WaitSpec<T> {
  kind: 'task' | 'workflow';
  /** The task's or the workflow's id. */
  id: string;
  /** Task ids whose end also wakes the waiter (a workflow's tasks: the last one's end ends it). */
  taskIds?: readonly string[];
  /** Workflow ids whose end also wakes the waiter (a workflow task's: a workflow cancel ends it). */
  workflowIds?: readonly string[];
  /** Longest wait (ms); then it answers with a fresh read of the current state. */
  timeoutMs: number;
  /** Reads the current view from the store (the store is the truth; may throw, e.g. not found). */
  read(): Promise<T>;
  /** True once the view is final (terminal). */
  done(view: T): boolean;
  /** The client went away: the waiter is dropped at once, without another read. */
  signal?: AbortSignal;
}

interface Waiter {
  spec: WaitSpec<unknown>;
  keys: string[];
  last: unknown;
  timer: TimerHandle | null;
  reading: boolean;
  again: boolean;
  settled: boolean;
  resolve(view: unknown): void;
  reject(err: unknown): void;
  unlisten: () => void;
}

const taskKey = (id: string) => `t:${id}`;
const workflowKey = (id: string) => `w:${id}`;

/**
 * The waiting requests of `?wait=` (long polls on a task or a workflow) held by this node. A waiter
 * answers as soon as its read shows a final state: it is woken by this node's end events
 * ({@link TaskEndSubscriber}) and by a batched re-check every `recheckMs` (ends elsewhere), and
 * then re-reads the store, the truth; an event is only a hint. At its timeout it answers with a
 * fresh read of the current state; a client that goes away frees its waiter at once; {@link close}
 * (shutdown) answers every waiter with its current state. At most `maxWaiters` at once.
 */
export class ResultWaiters {
  private readonly all = new Set<Waiter>();
  private readonly byKey = new Map<string, Set<Waiter>>();
  private readonly unsubscribe: () => void;
  private recheckTimer: TimerHandle | null = null;
  private closed = false;

  constructor(private readonly opts: ResultWaitersOptions) {
    this.unsubscribe = opts.events.subscribe((ends) => this.onEnds(ends));
  }

  /** Waiters held now. */
  get size(): number {
    return this.all.size;
  }

  /**
   * Waits for `spec`'s resource to be final. `first` is its view as just read: returned at once when
   * already final, after {@link close}, or when the client already went away.
   * @returns the final view, or at the timeout the current one (read again), or after an abort the
   *   last one read
   * @throws TooManyWaitersError when `maxWaiters` are held; the error of a re-read (e.g. the task
   *   was deleted: not found)
   */
  wait<T>(first: T, spec: WaitSpec<T>): Promise<T> {
    if (this.closed || spec.done(first) || spec.signal?.aborted) return Promise.resolve(first);
    if (this.all.size >= this.opts.maxWaiters) throw new TooManyWaitersError(this.opts.maxWaiters);
    return new Promise<T>((resolve, reject) => {
      const keys = [
        spec.kind === 'task' ? taskKey(spec.id) : workflowKey(spec.id),
        ...(spec.taskIds ?? []).map(taskKey),
        ...(spec.workflowIds ?? []).map(workflowKey),
      ];
      const w: Waiter = {
        spec: spec as WaitSpec<unknown>,
        keys,
        last: first,
        timer: null,
        reading: false,
        again: false,
        settled: false,
        resolve: resolve as (view: unknown) => void,
        reject,
        unlisten: () => undefined,
      };
      this.all.add(w);
      for (const k of keys) {
        let set = this.byKey.get(k);
        if (!set) this.byKey.set(k, (set = new Set()));
        set.add(w);
      }
      w.timer = this.opts.clock.setTimeout(() => {
        w.timer = null;
        void this.answerNow(w);
      }, spec.timeoutMs);
      if (spec.signal) {
        const onAbort = () => {
          this.release(w);
          w.resolve(w.last);
        };
        spec.signal.addEventListener('abort', onAbort, { once: true });
        w.unlisten = () => spec.signal?.removeEventListener('abort', onAbort);
      }
      this.armRecheck();
    });
  }

  /**
   * Shutdown: no new waiter is held (a wait answers at once with its first read) and every held
   * one answers now with its current state. Resolves when they all have their answer.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    if (this.recheckTimer) this.opts.clock.clearTimeout(this.recheckTimer);
    this.recheckTimer = null;
    await Promise.all([...this.all].map((w) => this.answerNow(w)));
  }

  private onEnds(ends: TaskEnds): void {
    for (const id of ends.taskIds) this.wakeKey(taskKey(id));
    for (const id of ends.workflowIds ?? []) this.wakeKey(workflowKey(id));
  }

  private wakeKey(key: string): void {
    const set = this.byKey.get(key);
    if (set) for (const w of [...set]) void this.wake(w);
  }

  /** Re-reads; answers if final. A wake during a read reads once more after it (no end is missed). */
  private async wake(w: Waiter): Promise<void> {
    if (w.settled) return;
    if (w.reading) {
      w.again = true;
      return;
    }
    w.reading = true;
    try {
      do {
        w.again = false;
        const view = await w.spec.read();
        if (w.settled) return;
        w.last = view;
        if (w.spec.done(view)) {
          this.release(w);
          w.resolve(view);
          return;
        }
      } while (w.again);
    } catch (err) {
      if (w.settled) return;
      this.release(w);
      w.reject(err);
    } finally {
      w.reading = false;
    }
  }

  /** Timeout or shutdown: released, then answered with a fresh read (or its error). */
  private async answerNow(w: Waiter): Promise<void> {
    if (w.settled) return;
    this.release(w);
    try {
      w.resolve(await w.spec.read());
    } catch (err) {
      w.reject(err);
    }
  }

  /** Forgets a waiter: its keys, its timer, its abort listener; the re-check stops when none is left. */
  private release(w: Waiter): void {
    if (w.settled) return;
    w.settled = true;
    this.all.delete(w);
    for (const k of w.keys) {
      const set = this.byKey.get(k);
      set?.delete(w);
      if (set?.size === 0) this.byKey.delete(k);
    }
    if (w.timer) this.opts.clock.clearTimeout(w.timer);
    w.timer = null;
    w.unlisten();
    if (this.all.size === 0 && this.recheckTimer) {
      this.opts.clock.clearTimeout(this.recheckTimer);
      this.recheckTimer = null;
    }
  }

  private armRecheck(): void {
    if (this.recheckTimer || this.closed || this.all.size === 0) return;
    this.recheckTimer = this.opts.clock.setTimeout(() => {
      this.recheckTimer = null;
      void this.recheck();
    }, this.opts.recheckMs);
  }

  /** One batched read per kind of every id waited on; the ended ones wake their waiters. */
  private async recheck(): Promise<void> {
    const tasks: string[] = [];
    const workflows: string[] = [];
    for (const w of this.all) (w.spec.kind === 'task' ? tasks : workflows).push(w.spec.id);
    try {
      const [endedTasks, endedWorkflows] = await Promise.all([
        tasks.length > 0 ? this.opts.endedTasks([...new Set(tasks)]) : new Set<string>(),
        workflows.length > 0 ? this.opts.endedWorkflows([...new Set(workflows)]) : new Set<string>(),
      ]);
      for (const id of endedTasks) this.wakeKey(taskKey(id));
      for (const id of endedWorkflows) this.wakeKey(workflowKey(id));
    } catch (err) {
      this.opts.onError?.(err);
    } finally {
      this.armRecheck();
    }
  }
}
