import { Command, InvalidArgumentError, Option } from 'commander';
import type { TaskPatchBody } from '../../sdk/client';
import { WaitTimeoutError } from '../../sdk/client';
import { CliEnv, CliExit, contextOf, jsonValue, nonNegativeNumber } from '../context';
import { details, print } from '../output';
import { taskView } from '../task-view';

/** Exit code of `wait` when the timeout passes first (the last state is printed). */
export const WAIT_TIMEOUT_EXIT = 4;

/** `patch`, `reschedule` and `wait`: changing a task that has not started, and waiting for one to end. */
export function taskChangeCommands(program: Command, cli: CliEnv): void {
  program
    .command('patch')
    .description('change a task that has not started: its time, priority or payload')
    .argument('<task_id>')
    .option('--at <time>', 'new scheduled_at (RFC 3339 with offset)')
    .addOption(new Option('--priority <priority>', 'new priority').choices(['high', 'medium', 'low']))
    .option('-p, --payload <json>', 'new payload as JSON', jsonValue)
    .action(async (id: string, f: { at?: string; priority?: TaskPatchBody['priority']; payload?: unknown }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const changes: TaskPatchBody = {
        ...(f.at !== undefined ? { scheduled_at: f.at } : {}),
        ...(f.priority !== undefined ? { priority: f.priority } : {}),
        ...(f.payload !== undefined ? { payload: f.payload } : {}),
      };
      if (Object.keys(changes).length === 0) throw new InvalidArgumentError('give --at, --priority or --payload');
      const task = await client.tasks.patch(id, changes);
      print(io, task, () => details(taskView({ ...task })));
    });

  program
    .command('reschedule')
    .description('move a task that has not started to another time')
    .argument('<task_id>')
    .argument('<time>', 'RFC 3339 with offset, or "now"')
    .action(async (id: string, time: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const task = await client.tasks.reschedule(id, time === 'now' ? null : time);
      print(io, task, () => `${id}: ${task.status}, due ${task.due_at}\n`);
    });

  program
    .command('wait')
    .description('wait until a task (or with --workflow a workflow) ends, and print it; exit 4 at the timeout')
    .argument('<id>')
    .option('--timeout <seconds>', 'give up after this many seconds', nonNegativeNumber, 60)
    .option('--workflow', 'the id is a workflow id')
    .action(async (id: string, f: { timeout: number; workflow?: boolean }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const options = { timeoutMs: f.timeout * 1000 };
      try {
        const view = f.workflow ? await client.workflows.wait(id, options) : await client.tasks.wait(id, options);
        print(io, view, () => (f.workflow ? `${id}: ${view.status}\n` : details(taskView({ ...view }))));
      } catch (err) {
        if (!(err instanceof WaitTimeoutError)) throw err;
        print(io, err.last, () => `${id}: still ${(err.last as { status: string }).status} after ${f.timeout} s\n`);
        throw new CliExit(WAIT_TIMEOUT_EXIT, err.message);
      }
    });
}
