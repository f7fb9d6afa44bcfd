import { Command } from 'commander';
import { CliEnv, contextOf, positiveInt } from '../context';
import { print } from '../output';

/** One kept line as the API answers it (contract/attempt-log-json.ts). */
interface LogLine {
  n: number;
  at: string;
  message: string;
  fields: unknown;
  truncated: boolean;
}

/** `12  2026-01-01T00:00:00.000Z  message {"k":1}` lines, after a note of the lines dropped. */
export function logText(log: { attempt: number; lines: LogLine[]; dropped_lines: number }): string {
  const out: string[] = [];
  if (log.dropped_lines > 0) out.push(`(${log.dropped_lines} earlier lines of attempt ${log.attempt} were dropped)`);
  if (log.lines.length === 0) out.push(`(attempt ${log.attempt} kept no log lines)`);
  for (const l of log.lines) {
    const fields = l.fields === null || l.fields === undefined ? '' : ` ${JSON.stringify(l.fields)}`;
    out.push(`${String(l.n).padStart(4)}  ${l.at}  ${l.message}${fields}${l.truncated ? ' (truncated)' : ''}`);
  }
  return out.join('\n') + '\n';
}

/** `logs <task_id> [--attempt n]`: the `ctx.log` lines kept for an attempt (default: the latest). */
export function logsCommand(program: Command, cli: CliEnv): void {
  program
    .command('logs')
    .description("show the ctx.log lines kept for a task's attempt (the last 200 lines / 64 KiB of each)")
    .argument('<task_id>')
    .option('-a, --attempt <n>', 'attempt number (default: the latest)', positiveInt)
    .action(async (id: string, flags: { attempt?: number }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      let attempt = flags.attempt;
      if (attempt === undefined) {
        const task = await client.tasks.get(id);
        attempt = task.attempts;
        if (attempt === 0) {
          print(io, { task_id: id, attempts: 0, lines: [] }, () => `${id} has not started an attempt yet\n`);
          return;
        }
      }
      const log = await client.tasks.attemptLog(id, attempt);
      print(io, log, () => logText(log));
    });
}
