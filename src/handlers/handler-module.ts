import { StartupError } from '../domain/startup-error';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import type { TaskHandler } from './types';

/**
 * Thrown at start-up when a configured handler module cannot be found or loaded, or exports no
 * handler: names the task type, the path as written in the config and, once known, the file it
 * resolved to.
 */
export class HandlerLoadError extends StartupError {
  /** Why, without the task type and paths. */
  readonly reason: string;

  /**
   * @param modulePath the module as written in the config (`./handlers/send-email.js`)
   * @param resolved where it was looked for: an absolute file, or a sentence saying from where
   */
  constructor(taskType: string, modulePath: string, reason: string, resolved?: string) {
    super(`handlers.${taskType}: cannot load "${modulePath}"${resolved ? ` (resolved to ${resolved})` : ''}: ${reason}`);
    this.reason = reason;
  }
}

/** A configured handler module located on disk: its task type, its path as written and the absolute file it names. */
export interface HandlerModuleRef {
  taskType: string;
  /** The module as written in the config. */
  written: string;
  /** The absolute file Node will load. */
  file: string;
}

/** What a handler module offers: the handler and, optionally, the JSON Schema of its payload. */
export interface HandlerModule {
  handler: TaskHandler;
  /** A JSON Schema (draft-07 keywords, as Ajv reads them) every payload of the type must match; undefined: none. */
  payloadSchema: object | undefined;
}

/** A path written relative to something (`./x`, `../x`, `.`), as opposed to a package name. */
function isRelative(spec: string): boolean {
  return /^\.\.?([\\/]|$)/.test(spec);
}

/**
 * Locates a configured handler module as Node's `require.resolve` would from `baseDir` (the folder
 * of the config file that names it): an absolute path as is; `./` or `../` against `baseDir`;
 * anything else as a file of that path in `baseDir` when one exists (how earlier versions read
 * every path), else as a package name (`my-handlers`, `@acme/jobs/send-email`) looked up in the
 * `node_modules` folders from `baseDir` up, through the package's `exports` (`require` or
 * `default` condition) or `main`. A file name may leave out `.js` (Node's `require` rules);
 * `.mjs` and `.cjs` files are named in full.
 * @throws HandlerLoadError naming the task type, the path as written and where it was looked for
 */
export function resolveHandlerModule(taskType: string, spec: string, baseDir: string): HandlerModuleRef {
  const asPath = path.isAbsolute(spec) || isRelative(spec) || fs.existsSync(path.resolve(baseDir, spec));
  const target = asPath ? path.resolve(baseDir, spec) : spec;
  try {
    const file = createRequire(path.join(baseDir, 'scheduler.config.js')).resolve(target);
    return { taskType, written: spec, file };
  } catch (err) {
    const where = asPath ? target : `package "${spec}" looked up from ${baseDir}`;
    const code = (err as { code?: string }).code;
    const reason = code === 'MODULE_NOT_FOUND' ? 'no such module' : (err as Error).message.split('\n')[0];
    throw new HandlerLoadError(taskType, spec, reason, where);
  }
}

/**
 * Every configured handler module of `config`, located ({@link resolveHandlerModule}) against the
 * folder of the config file that named it (`handlerDirs`; the working directory for those given
 * otherwise, e.g. as `overrides` to `loadConfig`).
 * @throws HandlerLoadError for the first module that cannot be found
 */
export function resolveHandlerModules(config: {
  handlers: Readonly<Record<string, string>>;
  handlerDirs?: Readonly<Record<string, string>>;
}): HandlerModuleRef[] {
  return Object.entries(config.handlers).map(([taskType, spec]) =>
    resolveHandlerModule(taskType, spec, config.handlerDirs?.[taskType] ?? process.cwd()),
  );
}

/**
 * `import()` kept as is: TypeScript compiles a literal `import()` to `require()` in CommonJS
 * output, which cannot load an ES module on Node 20. Node's `import()` loads both formats.
 */
const dynamicImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

/** `v` when it is an object or a function (something that may carry exports), else undefined. */
function exportsOf(v: unknown): Record<string, unknown> | undefined {
  return (typeof v === 'object' && v !== null) || typeof v === 'function' ? (v as Record<string, unknown>) : undefined;
}

/**
 * The handler and payload schema of a loaded module namespace. Read from, in order: the namespace
 * itself (ESM named exports, and what Node detects of a CommonJS module's), its `default` (an ES
 * module's default export; a CommonJS module's `module.exports`), and that one's `default` (what
 * `tsc` emits for `export default`: `exports.default`). The handler is the first function among
 * `default` and `handler` at those levels; the schema the first `payloadSchema`.
 * @throws Error saying what is missing or wrong
 */
export function handlerModuleShape(namespace: unknown): HandlerModule {
  const levels: Array<Record<string, unknown>> = [];
  for (let v = exportsOf(namespace); v && levels.length < 3; v = exportsOf(v.default)) levels.push(v);
  let handler: unknown;
  let payloadSchema: unknown;
  for (const level of levels) {
    if (handler === undefined) handler = [level.default, level.handler].find((f) => typeof f === 'function');
    if (payloadSchema === undefined) payloadSchema = level.payloadSchema;
  }
  if (typeof handler !== 'function')
    throw new Error('it exports no handler function (a default export, `handler`, or `module.exports` as the function)');
  if (payloadSchema !== undefined && (typeof payloadSchema !== 'object' || payloadSchema === null || Array.isArray(payloadSchema)))
    throw new Error('its payloadSchema is not a JSON Schema object');
  return { handler: handler as TaskHandler, payloadSchema: payloadSchema as object | undefined };
}

/**
 * Loads a located handler module with Node's `import()`: an ES module (`.mjs`, or `.js` under a
 * `package.json` with `"type": "module"`), CommonJS (`.cjs`, other `.js`) or TypeScript compiled
 * to either. Runs the module's top-level code in this process.
 * @throws HandlerLoadError when it does not load or has no handler ({@link handlerModuleShape})
 */
export async function importHandlerModule(ref: HandlerModuleRef): Promise<HandlerModule> {
  let namespace: unknown;
  try {
    namespace = await dynamicImport(pathToFileURL(ref.file).href);
  } catch (err) {
    throw new HandlerLoadError(ref.taskType, ref.written, (err as Error).message.split('\n')[0], ref.file);
  }
  try {
    return handlerModuleShape(namespace);
  } catch (err) {
    throw new HandlerLoadError(ref.taskType, ref.written, (err as Error).message, ref.file);
  }
}
