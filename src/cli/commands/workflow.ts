import { Command, Option } from 'commander';
import { CliEnv, contextOf, positiveInt, readJsonFile } from '../context';
import { details, pageTable, print, table } from '../output';
import type { ListWorkflowsQuery, WorkflowSubmissionBody } from '../../sdk/client';

const WORKFLOW_COLUMNS: Array<[string, string]> = [
  ['WORKFLOW_ID', 'workflow_id'],
  ['NAME', 'workflow_name'],
  ['STATUS', 'status'],
  ['TASKS', 'task_count'],
  ['OPEN', 'open_tasks'],
  ['CREATED', 'created_at'],
];

/** `workflow submit <file>`, `workflow get|cancel <id>`, `workflow list` (and `wait --workflow <id>`). */
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
      const ack = await client.workflows.submit(readJsonFile(file) as WorkflowSubmissionBody, { traceparent: f.traceparent });
      // One row per task: its workflow-local id, the scheduler's task id and its first state.
      const rows = Object.entries(ack.tasks).map(([local, status]) => ({
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
      const w = await client.workflows.get(id);
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

  wf.command('list')
    .description('list workflows, newest first')
    .addOption(new Option('--status <status>', 'filter by status').choices(['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']))
    .option('--tenant <tenant>', 'filter by tenant (admin key)')
    .option('--limit <n>', 'page size', positiveInt, 20)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (f: { status?: ListWorkflowsQuery['status']; tenant?: string; limit: number; cursor?: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const page = await client.workflows.list({ status: f.status, tenant: f.tenant, limit: f.limit, cursor: f.cursor });
      print(io, page, () => pageTable(page.workflows, WORKFLOW_COLUMNS, page.next_cursor));
    });

  wf.command('cancel')
    .description('cancel a workflow (its running tasks are aborted)')
    .argument('<workflow_id>')
    .action(async (id: string, _f: unknown, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const res = await client.workflows.cancel(id);
      print(io, res, () => `${id}: ${res.status}${res.running_task_ids.length ? ` (aborting ${res.running_task_ids.join(', ')})` : ''}\n`);
    });
}
