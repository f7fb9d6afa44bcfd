/**
 * Workflow reads (no writes): getWorkflow, getWorkflowTasks, listWorkflows. A workflow whose
 * insert has not completed (status CREATING, RELEASING, ABORTING: insert-workflow.ts) is not
 * shown: getWorkflow answers null, getWorkflowTasks [], listWorkflows skips it. Tasks and the
 * workflow document are separate documents read one after the other, so a view taken while a
 * task ends may show the task's new state with the workflow's count from a moment before (the
 * next read agrees); nothing half-inserted is ever shown.
 * Indexes: `workflows_seq`, `workflows_status_seq`, `workflows_tenant_seq`; tasks by
 * `tasks_workflow_seq`.
 */
import { TaskState } from '../../../domain/task';
import { WORKFLOW_STATUSES, WorkflowRecord, WorkflowTaskSummary } from '../../../domain/workflow';
import { decodeCursor, encodeCursor } from '../../cursor';
import { WorkflowListQuery, WorkflowPage } from '../../store';
import type { MongoCollections } from '../collections';
import { fromJson } from '../documents';
import { isVisibleWorkflow, workflowFromDoc } from '../workflow-documents';

export async function getWorkflow(c: MongoCollections, id: string): Promise<WorkflowRecord | null> {
  const doc = await c.workflows.findOne({ _id: id });
  return doc && isVisibleWorkflow(doc) ? workflowFromDoc(doc) : null;
}

/** Every task of a visible workflow in submission order, with its dependencies' workflow-local ids. */
export async function getWorkflowTasks(c: MongoCollections, id: string): Promise<WorkflowTaskSummary[]> {
  const wf = await c.workflows.findOne({ _id: id }, { projection: { status: 1 } });
  if (!wf || !isVisibleWorkflow(wf)) return [];
  const docs = await c.tasks
    .find(
      { workflow_id: id },
      {
        projection: {
          _id: 1,
          workflow_task_id: 1,
          task_type: 1,
          state: 1,
          unmet_deps: 1,
          upstream_ids: 1,
          attempts: 1,
          created_at: 1,
          started_at: 1,
          completed_at: 1,
          duration_ms: 1,
          error: 1,
        },
      },
    )
    .sort({ seq: 1 })
    .toArray();
  const local = new Map(docs.map((d) => [d._id, d.workflow_task_id as string]));
  const position = new Map(docs.map((d, i) => [d._id, i]));
  const bySubmission = (a: string, b: string) => (position.get(a) as number) - (position.get(b) as number);
  return docs.map((d) => ({
    taskId: d._id,
    workflowTaskId: d.workflow_task_id as string,
    taskType: d.task_type,
    state: d.state as TaskState,
    // A purged upstream (retention after the workflow finished) is left out, as its edge is in SQLite;
    // in the upstream tasks' submission order, as the SQL stores list them.
    dependencies: (d.upstream_ids ?? [])
      .filter((u) => local.has(u))
      .sort(bySubmission)
      .map((u) => local.get(u) as string),
    unmetDependencies: d.unmet_deps ?? 0,
    attempts: d.attempts,
    createdAt: d.created_at,
    startedAt: d.started_at,
    completedAt: d.completed_at,
    durationMs: d.duration_ms,
    error: fromJson(d.error) as WorkflowTaskSummary['error'],
  }));
}

/** Newest first (seq descending); the cursor is the last seq of the previous page. */
export async function listWorkflows(c: MongoCollections, q: WorkflowListQuery): Promise<WorkflowPage> {
  const filter: Record<string, unknown> = { status: q.status ?? { $in: [...WORKFLOW_STATUSES] } };
  if (q.tenantId) filter.tenant_id = q.tenantId;
  if (q.cursor !== undefined) filter.seq = { $lt: decodeCursor(q.cursor) };
  const docs = await c.workflows
    .find(filter)
    .sort({ seq: -1 })
    .limit(q.limit + 1)
    .toArray();
  const page = docs.slice(0, q.limit).map(workflowFromDoc);
  const nextCursor = docs.length > q.limit && page.length > 0 ? encodeCursor(page[page.length - 1].seq) : null;
  return { workflows: page, nextCursor };
}
