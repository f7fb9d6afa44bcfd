import { Command } from 'commander';
import { CliEnv, contextOf, readJsonFile } from '../context';
import { details, print, table } from '../output';

/** `workflow submit <file>`, `workflow get <id>`. */
export function workflowCommands(program: Command, cli: CliEnv): void {
  const wf = program.command('workflow').description('DAG workflows');

  wf.command('submit')
    .description(
      'submit the workflow in a JSON file ({workflow_name?, tasks: [{task_id, task_type, dependencies?, …}], metadata?}; - for stdin)',
    )
    .argument('<file>')
    .option('--traceparent <value>', 'W3C traceparent to join')
    .action(async (file: string, f: { traceparent?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const ack = await client.post('/api/v1/workflows', readJsonFile(file), f.traceparent ? { traceparent: f.traceparent } : {});
      // One row per task: its workflow-local id, the scheduler's task id and its first state.
      const rows = Object.entries(ack.tasks as Record<string, string>).map(([local, status]) => ({
        local,
        task_id: ack.task_ids[local],
        status,
      }));
      print(
        io,
        ack,
        () =>
          `workflow ${ack.workflow_id} ${ack.status}\n` +
          table(rows, [
            ['WORKFLOW_TASK_ID', 'local'],
            ['TASK_ID', 'task_id'],
            ['STATUS', 'status'],
          ]),
      );
    });

  wf.command('get')
    .description("show a workflow and its tasks' states")
    .argument('<workflow_id>')
    .action(async (id: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const w = await client.get(`/api/v1/workflows/${encodeURIComponent(id)}`);
      print(io, w, () => {
        // The maps repeat what the per-task table shows.
        const { tasks: _states, task_ids: _ids, task_details: rows, ...head } = w;
        return (
          details(head) +
          '\n' +
          table(rows ?? [], [
            ['WORKFLOW_TASK_ID', 'workflow_task_id'],
            ['TASK_ID', 'task_id'],
            ['TYPE', 'task_type'],
            ['STATUS', 'status'],
            ['ATTEMPTS', 'attempts'],
          ])
        );
      });
    });
}
