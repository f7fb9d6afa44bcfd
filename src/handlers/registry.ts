import { StartupError } from '../domain/startup-error';
import path from 'node:path';
import { echo } from './builtins/echo';
import { fail } from './builtins/fail';
import { http } from './builtins/http';
import { noop } from './builtins/noop';
import { sleep } from './builtins/sleep';
import { TaskHandler } from './types';

/** The built-in handlers (docs/DESIGN.md §6). */
export const BUILTIN_HANDLERS: Readonly<Record<string, TaskHandler>> = Object.freeze({ noop, echo, sleep, fail, http });

/** Thrown at start-up when a configured handler module cannot be loaded. */
export class HandlerLoadError extends StartupError {
  constructor(taskType: string, modulePath: string, reason: string) {
    super(`handlers.${taskType}: cannot load "${modulePath}": ${reason}`);
  }
}

/** Names of every registered task type: built-ins plus configured ones, sorted. */
export function registeredTaskTypes(configured: Readonly<Record<string, string>>): string[] {
  return [...new Set([...Object.keys(BUILTIN_HANDLERS), ...Object.keys(configured)])].sort();
}

/**
 * {@link loadHandlers} for a worker process, which must start whatever a handler module does: a
 * module that cannot be loaded becomes a handler that fails permanently with the load error (the
 * service checked every module at start-up; this covers a file removed since). A worker that
 * threw here would be respawned by comedy in a loop.
 */
export function loadHandlersOrFailing(configured: Readonly<Record<string, string>>, baseDir: string): Map<string, TaskHandler> {
  const map = new Map<string, TaskHandler>(Object.entries(BUILTIN_HANDLERS));
  for (const [taskType, modulePath] of Object.entries(configured)) {
    try {
      for (const [k, v] of loadHandlers({ [taskType]: modulePath }, baseDir)) map.set(k, v);
    } catch (err) {
      const message = (err as Error).message;
      map.set(taskType, () => {
        throw Object.assign(new Error(message), { name: 'HandlerLoadError', permanent: true });
      });
    }
  }
  return map;
}

/**
 * Resolves `task_type → handler` in a worker process. Configured modules (`handlers` in config:
 * `task_type → module path`, relative to `baseDir`) export the handler as `default`, as
 * `handler`, or as the module itself; they may override a built-in.
 * @throws HandlerLoadError when a module is missing or exports no function
 */
export function loadHandlers(configured: Readonly<Record<string, string>>, baseDir: string): Map<string, TaskHandler> {
  const map = new Map<string, TaskHandler>(Object.entries(BUILTIN_HANDLERS));
  for (const [taskType, modulePath] of Object.entries(configured)) {
    const resolved = path.isAbsolute(modulePath) ? modulePath : path.resolve(baseDir, modulePath);
    let mod: unknown;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      mod = require(resolved);
    } catch (err) {
      throw new HandlerLoadError(taskType, modulePath, (err as Error).message);
    }
    const m = mod as { default?: unknown; handler?: unknown };
    const fn = typeof mod === 'function' ? mod : (m.default ?? m.handler);
    if (typeof fn !== 'function') throw new HandlerLoadError(taskType, modulePath, 'it exports no function');
    map.set(taskType, fn as TaskHandler);
  }
  return map;
}
