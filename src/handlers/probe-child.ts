/**
 * The child process of `probeHandlerModules`: loads each handler module it is sent (one IPC
 * message, an array of `HandlerModuleRef`), answers one message with, per module, its payload
 * schema (null: none) or the reason it does not load, then exits whatever the modules left
 * running (timers, sockets). So a module's top-level code never runs in the service process.
 */
import { HandlerLoadError, HandlerModuleRef, importHandlerModule } from './handler-module';

/** One module's outcome, as sent back over IPC (JSON). */
export type ProbeOutcome = { taskType: string; payloadSchema: object | null } | { taskType: string; reason: string };

async function probe(refs: HandlerModuleRef[]): Promise<ProbeOutcome[]> {
  const out: ProbeOutcome[] = [];
  for (const ref of refs) {
    try {
      const mod = await importHandlerModule(ref);
      out.push({ taskType: ref.taskType, payloadSchema: mod.payloadSchema ?? null });
    } catch (err) {
      out.push({ taskType: ref.taskType, reason: err instanceof HandlerLoadError ? err.reason : (err as Error).message });
    }
  }
  return out;
}

if (require.main === module && process.send) {
  process.once('message', (refs: HandlerModuleRef[]) => {
    void probe(refs).then((outcomes) => process.send?.(outcomes, () => process.exit(0)));
  });
}
