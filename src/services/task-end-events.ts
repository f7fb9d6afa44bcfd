import type { TaskEndPublisher, TaskEndSubscriber, TaskEnds } from './ports';

/**
 * The node's "task ended" signal: one instance, made by the composition root (`bootstrap.ts`) and
 * handed to the actors (who publish) and to the services (whose waiters subscribe). Delivery is
 * synchronous, in the publisher's turn; a listener that throws is isolated (the others still get
 * the event, the publisher never sees the error), because publishing sits on the completion path.
 */
export class TaskEndEvents implements TaskEndPublisher, TaskEndSubscriber {
  private readonly listeners = new Set<(ends: TaskEnds) => void>();

  /** Announces `ends` to every listener. Never throws. */
  publish(ends: TaskEnds): void {
    if (ends.taskIds.length === 0 && (ends.workflowIds?.length ?? 0) === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(ends);
      } catch {
        // A listener's fault stays its own: the completion path must go on.
      }
    }
  }

  /** @returns a function that removes `listener` */
  subscribe(listener: (ends: TaskEnds) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}
