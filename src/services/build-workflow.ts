import type { Config } from '../config';
import type { WorkflowSubmissionBody } from '../contract/types';
import { validateDag } from '../domain/dag/validate-dag';
import { InvalidWorkflowError, PayloadTooLargeError, ValidationError, WorkflowTooLargeError } from '../domain/errors';
import { assertJsonSize } from '../contract/json-size';
import { uuidv7 } from '../domain/task-id';
import { NewWorkflow, NewWorkflowTask } from '../domain/workflow';
import { buildNewTask } from './build-task';
import { metadataJson } from '../contract/task-json';
import type { PayloadChecks } from '../handlers/payload-schemas';

/**
 * A workflow submission as the API receives it (already checked against the JSON Schema, whose type
 * it is): `tasks[i].task_id` is the task's workflow-local id (the scheduler gives each task its own id).
 */
export type WorkflowSubmission = WorkflowSubmissionBody;

/**
 * Refuses a workflow whose tasks list more than `max` dependencies in all (each entry of each
 * task's `dependencies` counted, duplicates too). Reads items not yet validated: an entry that
 * is no object, or `dependencies` that are no array, count nothing (the schema refuses them next).
 * @throws WorkflowTooLargeError (413, `details.limit` `dependencies`)
 */
export function assertDependencyCount(tasks: readonly unknown[], max: number): void {
  let count = 0;
  for (const t of tasks) {
    const deps = (t as { dependencies?: unknown } | null)?.dependencies;
    if (Array.isArray(deps)) count += deps.length;
  }
  if (count > max) throw new WorkflowTooLargeError(max, count, 'dependencies');
}

/**
 * Turns a schema-valid workflow submission into a {@link NewWorkflow} (docs/DESIGN.md §8):
 * 1. more than `config.workflowMaxTasks` tasks, or `config.workflowMaxDependencies` dependencies in
 *    all → {@link WorkflowTooLargeError} (413);
 * 2. the graph is checked by `validateDag` (iterative Kahn, cycle extraction; no recursion, so a
 *    10,000-task chain is fine): no tasks, duplicate ids, unknown dependencies, self-dependency or
 *    a cycle → {@link InvalidWorkflowError} (400) naming the ids;
 * 3. each task is built like a single submission (`buildNewTask`: registered type, real dates,
 *    payload size, defaults, a UUID v7 id, its partition), with field paths `tasks[i].…`; its
 *    metadata is the workflow's `metadata` overlaid by its own (so tasks inherit the tenant);
 *    a task that names another tenant than the workflow's is refused (400 naming
 *    `tasks[i].metadata.tenant_id`): a workflow and its tasks belong to one tenant, whose key
 *    reads them all through the workflow;
 * 4. tasks without dependencies are PENDING (SCHEDULED when their `scheduled_at` is later); the
 *    others BLOCKED, depending on the distinct task ids of their dependencies.
 * Tasks keep their input order. Pure apart from the random bits of the ids.
 * @param now submission time (epoch ms)
 * @param payloads the built-in types' payload checks (none: not checked)
 * @throws WorkflowTooLargeError | InvalidWorkflowError | ValidationError | UnknownTaskTypeError |
 *   PayloadTooLargeError (a payload or metadata over its cap; the workflow's metadata first, see
 *   assertWorkflowMetadata)
 */
export function buildWorkflow(
  body: WorkflowSubmission,
  now: number,
  config: Config,
  taskTypes: ReadonlySet<string>,
  payloads?: PayloadChecks,
): NewWorkflow {
  const max = config.workflowMaxTasks;
  if (body.tasks.length > max) throw new WorkflowTooLargeError(max, body.tasks.length);
  assertDependencyCount(body.tasks, config.workflowMaxDependencies);
  try {
    validateDag(
      body.tasks.map((t) => ({ id: t.task_id, dependencies: t.dependencies })),
      max,
    );
  } catch (err) {
    throw err instanceof ValidationError ? invalidWorkflow(err) : err;
  }
  const meta = body.metadata ?? {};
  const tenantId = typeof meta.tenant_id === 'string' ? meta.tenant_id : config.defaults.tenantId;
  assertWorkflowMetadata(meta, tenantId, body.tasks.length, config);
  const taskIds = new Map<string, string>();
  const built = body.tasks.map((t, i) => {
    const { task_id: localId, dependencies: _deps, ...submission } = t;
    const own = submission.metadata?.tenant_id;
    if (own !== undefined && own !== tenantId) {
      throw new ValidationError(
        `tasks[${i}].metadata.tenant_id`,
        `must be the workflow's tenant "${tenantId}" (a workflow and its tasks belong to one tenant)`,
      );
    }
    const task = buildNewTask(
      { ...submission, metadata: { ...meta, ...submission.metadata } },
      `tasks[${i}].`,
      now,
      config,
      taskTypes,
      payloads,
    );
    taskIds.set(localId, task.id);
    return task;
  });
  const tasks: NewWorkflowTask[] = built.map((task, i) => {
    const local = body.tasks[i];
    const dependsOn = [...new Set(local.dependencies ?? [])].map((d) => taskIds.get(d) as string);
    return { ...task, state: dependsOn.length === 0 ? task.state : 'BLOCKED', workflowTaskId: local.task_id, dependsOn };
  });
  return {
    id: uuidv7(now),
    workflowName: body.workflow_name ?? null,
    tenantId,
    metadata: meta,
    createdAt: now,
    tasks,
  };
}

/**
 * The workflow's own `metadata`, checked under its own name before it is copied into every task:
 * at most 64 levels deep, at most `maxMetadataBytes` of JSON as each task stores it (with the
 * tenant and `correlation_id`: contract/task-json.ts `metadataJson`, more than the workflow shows), and,
 * copied into each of `tasks` tasks, at most `workflowBodyLimitBytes` in all, so a small request
 * cannot store much more than the largest body it may send.
 * @throws ValidationError (400) | PayloadTooLargeError (413), field `metadata`
 */
function assertWorkflowMetadata(meta: Record<string, unknown>, tenantId: string, tasks: number, config: Config): void {
  const correlationId = typeof meta.correlation_id === 'string' ? meta.correlation_id : null;
  const bytes = assertJsonSize(metadataJson({ metadata: meta, tenantId, correlationId }), config.maxMetadataBytes, 'metadata');
  if (bytes * tasks > config.workflowBodyLimitBytes) {
    throw new PayloadTooLargeError(config.workflowBodyLimitBytes, 'metadata', bytes * tasks, `copied into each of the ${tasks} tasks`);
  }
}

/** The catalog error for a graph `validateDag` refused; `details` keep its culprits. */
function invalidWorkflow(err: ValidationError): InvalidWorkflowError {
  const { field, reason, ...culprits } = err.details as { field: string; reason: string } & Record<string, unknown>;
  const problem =
    'cycle' in culprits
      ? 'cycle'
      : 'duplicate_ids' in culprits
        ? 'duplicate_ids'
        : 'unknown_dependencies' in culprits
          ? 'unknown_dependencies'
          : 'task_ids' in culprits
            ? 'self_dependency'
            : 'empty';
  return new InvalidWorkflowError(field, problem, reason, culprits);
}
