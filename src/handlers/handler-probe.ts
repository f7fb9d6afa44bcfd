import { fork } from 'node:child_process';
import path from 'node:path';
import { SchemaValidator } from '../contract/validation';
import type { Clock } from '../domain/clock';
import { StartupError } from '../domain/startup-error';
import { HandlerLoadError, HandlerModuleRef } from './handler-module';
import type { ProbeOutcome } from './probe-child';

/** Thrown at start-up when a handler module's `payloadSchema` is not a JSON Schema Ajv can compile. */
export class HandlerSchemaError extends StartupError {
  constructor(ref: HandlerModuleRef, reason: string) {
    super(`handlers.${ref.taskType}: the payloadSchema of "${ref.written}" (${ref.file}) does not compile: ${reason}`);
  }
}

/**
 * Checks every configured handler module at start-up and collects the payload schemas they export,
 * without running any module's code in this process: the modules are loaded in one short-lived
 * child process (`probe-child.ts`), which sends back each module's schema as JSON and exits. Each
 * schema is compiled here (Ajv, as the built-ins' are), so a schema that does not compile stops
 * start-up too. No modules: no child process.
 * @param timeoutMs how long the child may take to load them all (ms; the service uses `workerStartTimeoutMs`)
 * @returns task type → payload schema, for the modules that export one
 * @throws HandlerLoadError (a module that does not load or exports no handler, or the child did not
 *   answer in time) | HandlerSchemaError (a schema that does not compile); both exit 78
 */
export async function probeHandlerModules(
  refs: ReadonlyArray<HandlerModuleRef>,
  options: { clock: Clock; timeoutMs: number },
): Promise<Record<string, object>> {
  if (refs.length === 0) return {};
  const outcomes = await runProbe(refs, options);
  const schemas: Record<string, object> = {};
  const validator = new SchemaValidator();
  for (const ref of refs) {
    const outcome = outcomes.find((o) => o.taskType === ref.taskType);
    if (!outcome) throw new HandlerLoadError(ref.taskType, ref.written, 'the probe process did not report it', ref.file);
    if ('reason' in outcome) throw new HandlerLoadError(ref.taskType, ref.written, outcome.reason, ref.file);
    if (outcome.payloadSchema === null) continue;
    try {
      validator.compile(outcome.payloadSchema);
    } catch (err) {
      throw new HandlerSchemaError(ref, (err as Error).message);
    }
    schemas[ref.taskType] = outcome.payloadSchema;
  }
  return schemas;
}

/** Forks the probe child, sends it the modules and waits for its one answer, its exit or the timeout. */
function runProbe(refs: ReadonlyArray<HandlerModuleRef>, options: { clock: Clock; timeoutMs: number }): Promise<ProbeOutcome[]> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'probe-child.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      options.clock.clearTimeout(timer);
      outcome();
    };
    const fail = (reason: string) =>
      settle(() => {
        child.kill('SIGKILL');
        const first = refs[0];
        const which = refs.map((r) => `"${r.written}"`).join(', ');
        reject(new HandlerLoadError(first.taskType, first.written, `${reason} (loading ${which})`, first.file));
      });
    const timer = options.clock.setTimeout(
      () => fail(`the handler modules did not load within ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    child.once('message', (outcomes: ProbeOutcome[]) => settle(() => resolve(outcomes)));
    child.once('error', (err) => fail(`the probe process failed: ${err.message}`));
    // `close` (not `exit`): it comes after the IPC channel has delivered the answer.
    child.once('close', (code, signal) => fail(`the probe process exited (${signal ?? `code ${code}`}) while loading them`));
    child.send([...refs]);
  });
}
