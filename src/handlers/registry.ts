import { echo } from './builtins/echo';
import { fail } from './builtins/fail';
import { http } from './builtins/http';
import { noop } from './builtins/noop';
import { sleep } from './builtins/sleep';
import { HandlerModuleRef, importHandlerModule } from './handler-module';
import { TaskHandler } from './types';

export { HandlerLoadError } from './handler-module';

/** The built-in handlers (docs/DESIGN.md §6). */
export const BUILTIN_HANDLERS: Readonly<Record<string, TaskHandler>> = Object.freeze({ noop, echo, sleep, fail, http });

/** Names of every registered task type: built-ins plus configured ones, sorted. */
export function registeredTaskTypes(configured: Readonly<Record<string, string>>): string[] {
  return [...new Set([...Object.keys(BUILTIN_HANDLERS), ...Object.keys(configured)])].sort();
}

/**
 * The task types a start limit may name (`rateLimits.<type>` in the config, `PUT
 * /api/v1/rate-limits/{type}`): the registered ones, since a limit on a type no handler serves
 * would never apply; null (any type) when external queues are configured, whose consumers may
 * serve any type and whose tasks the limit holds for too.
 */
export function limitableTaskTypes(config: {
  handlers: Readonly<Record<string, string>>;
  externalQueues?: Readonly<Record<string, unknown>>;
}): string[] | null {
  return Object.keys(config.externalQueues ?? {}).length > 0 ? null : registeredTaskTypes(config.handlers);
}

/**
 * Resolves `task_type → handler` in a worker process: the built-ins, then each configured module
 * (located by `resolveHandlerModules`, loaded by `importHandlerModule`: ESM or CommonJS, its
 * handler as `default`, as `handler`, or as the module itself; it may override a built-in). The
 * worker must start whatever a handler module does: a
 * module that cannot be loaded becomes a handler that fails permanently with the load error (the
 * service checked every module at start-up; this covers a file removed since). A worker that
 * threw here would be respawned by comedy in a loop.
 */
export async function loadHandlersOrFailing(modules: ReadonlyArray<HandlerModuleRef>): Promise<Map<string, TaskHandler>> {
  const map = new Map<string, TaskHandler>(Object.entries(BUILTIN_HANDLERS));
  for (const ref of modules) {
    try {
      map.set(ref.taskType, (await importHandlerModule(ref)).handler);
    } catch (err) {
      const message = (err as Error).message;
      map.set(ref.taskType, () => {
        throw Object.assign(new Error(message), { name: 'HandlerLoadError', permanent: true });
      });
    }
  }
  return map;
}
