import { Command } from 'commander';
import { CliEnv, contextOf, readJsonFile } from '../context';
import { details, print, table } from '../output';

/** `workflow submit <file>`, `workflow get <id>`. */
export function workflowCommands(program: Command, cli: CliEnv): void {
  const wf = program.command('workflow').description('DAG workflows');

  wf.command('submit')
    .description('submit the workflow in a JSON file ({name?, tasks: [...], metadata?}; - for stdin)')
    .argument('<file>')
    .option('--traceparent <value>', 'W3C traceparent to join')
    .action(async (file: string, f: { traceparent?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const ack = await client.post('/api/v1/workflows', readJsonFile(file), f.traceparent ? { traceparent: f.traceparent } : {});
      print(io, ack, () => `workflow ${ack.workflow_id} ${ack.status}\n` + table(ack.tasks, [['ID', 'id'], ['TASK_ID', 'task_id'], ['STATUS', 'status']]));
    });

  wf.command('get')
    .description("show a workflow and its tasks' states")
    .argument('<workflow_id>')
    .action(async (id: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const w = await client.get(`/api/v1/workflows/${encodeURIComponent(id)}`);
      print(io, w, () => {
        const { tasks, ...head } = w;
        return details(head) + '\n' + table(tasks ?? [], [['ID', 'id'], ['TASK_ID', 'task_id'], ['TYPE', 'task_type'], ['STATUS', 'status'], ['ATTEMPTS', 'attempts']]);
      });
    });
}
