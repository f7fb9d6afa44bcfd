import type { Command } from 'commander';
import type { SchedulerClient } from '../sdk/client';
import { CliEnv, CliExit, contextOf } from './context';
import { details, print } from './output';

/** A command of zero or one argument that makes one client call and prints its answer. */
export interface SimpleCommand<R> {
  name: string;
  description: string;
  /** The one argument (`<task_id>`), if any. */
  argument?: string;
  run: (client: SchedulerClient, arg: string) => Promise<R>;
  /** The text for people (default: the answer as `key: value` lines); `--json` prints the answer. */
  human?: (answer: R, arg: string) => string;
  /** A failing exit code for an answer that is no success (printed all the same); default 0. */
  exitCode?: (answer: R) => number;
}

/** Adds `spec` under `parent`: parse, call, print (errors reach runCli's exit codes). */
export function simpleCommand<R extends object>(parent: Command, cli: CliEnv, spec: SimpleCommand<R>): Command {
  const c = parent.command(spec.name).description(spec.description);
  if (spec.argument) c.argument(spec.argument);
  return c.action(async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const arg = spec.argument ? (args[0] as string) : '';
    const { client, io } = contextOf(cmd, cli);
    const answer = await spec.run(client, arg);
    print(io, answer, () => (spec.human ? spec.human(answer, arg) : details(answer)));
    const code = spec.exitCode?.(answer) ?? 0;
    if (code !== 0) throw new CliExit(code, `${spec.name}: exit ${code}`);
  });
}
