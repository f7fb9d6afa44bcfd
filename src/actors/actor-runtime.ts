import { ActorContext, createActorSystem, spawnLocal } from './runtime/comedy';
import { depsResource, SchedulerDeps } from './deps';
import type { ActorRouter } from './router';
import { SupervisorActor } from './supervisor';
import type { SupervisorMessages } from './protocol';
import { TypedRef } from './runtime/typed-ref';

/** The running actor system of one scheduler instance. */
export interface ActorRuntime {
  /** Where actor traffic goes (the supervisor registers the actors in it). */
  router: ActorRouter;
  supervisor: TypedRef<SupervisorMessages>;
  /** comedy's root actor, for in-cluster callers that create their own actors. */
  root: ActorContext;
  /**
   * Waits (≤ graceMs) for running attempts, then destroys every actor and worker process.
   * @returns the attempts still running, and the finished ones whose completions the store did not take
   */
  close(graceMs: number): Promise<{ stillRunning: number; unwritten: number }>;
}

/**
 * Starts the comedy actor system: supervisor → dispatcher (+ forked workers) and partition owners.
 * The actor library is reached only through `runtime/comedy.ts`.
 * @param deps store, clock, config, metrics, log and an empty router that the supervisor fills
 */
export async function startActorRuntime(deps: SchedulerDeps): Promise<ActorRuntime> {
  const system = createActorSystem([depsResource(deps)], deps.config.logLevel);
  try {
    const root = await system.rootActor();
    const supervisor = new TypedRef<SupervisorMessages>(await spawnLocal(root, SupervisorActor, 'supervisor'));
    await supervisor.ask('start', null);
    let closed: Promise<{ stillRunning: number; unwritten: number }> | null = null;
    return {
      router: deps.router,
      supervisor,
      root,
      close: (graceMs) =>
        (closed ??= (async () => {
          const result = await supervisor.ask('drain', { graceMs }).catch(() => ({ stillRunning: -1, unwritten: 0 }));
          await system.destroy();
          return result;
        })()),
    };
  } catch (err) {
    await system.destroy().catch(() => undefined);
    throw err;
  }
}
