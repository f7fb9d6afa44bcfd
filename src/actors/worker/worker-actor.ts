import type { Actor } from 'comedy';
import { SystemClock } from '../../domain/clock';
import { loadHandlersOrFailing } from '../../handlers/registry';
import { TypedRef } from '../typed-ref';
import { WorkerHello, WorkerToDispatcher, WorkItem } from './protocol';
import { TaskRunner } from './task-runner';

interface WorkerParams {
  workerId: string;
  concurrency: number;
  handlers: Record<string, string>;
  baseDir: string;
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

  initialize(self: Actor): void {
    // Ctrl-C reaches the whole process group, and comedy's child system exits on it. Shutdown is
    // the service's call: it lets running attempts finish (shutdownGraceMs) and then destroys the
    // workers; a worker that died on the signal would be respawned mid-shutdown, its attempts lost.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => undefined);
    }
    const p = self.getCustomParameters() as WorkerParams;
    const parent = new TypedRef<WorkerToDispatcher>(self.getParent());
    this.params = p;
    this.runner = new TaskRunner(
      loadHandlersOrFailing(p.handlers, p.baseDir),
      (results) => parent.tell('completed', { workerId: p.workerId, pid: process.pid, results }),
      new SystemClock(),
    );
  }

  hello(): WorkerHello {
    const p = this.params as WorkerParams;
    return { workerId: p.workerId, pid: process.pid, credits: p.concurrency };
  }

  run(msg: { tasks: WorkItem[] }): void {
    this.runner?.run(msg.tasks);
  }

  abort(msg: { taskId: string; attempt: number }): void {
    this.runner?.abort(msg.taskId, msg.attempt);
  }
}

export = WorkerActor;
