import type { Config } from '../config';
import { limitAsString, pageLimit } from '../contract/page-limit';
import { Caller, canAccess, OPEN_CALLER } from '../tenancy/caller';
import { tenantFilter, withCallerTenant } from '../tenancy/scope';
import type { SubmissionGuard } from './submission-guard';
import { SchemaValidator } from '../contract/validation';
import { WorkflowAck, workflowAckJson, workflowJson, WorkflowPageView, WorkflowView } from '../contract/workflow-json';
import type { ListWorkflowsQuery, ServiceQuery, WorkflowSubmissionBody } from '../contract/types';
import { listWorkflowsQuerySchema, workflowSubmissionSchema } from '../contract/workflow-schemas';
import { Clock } from '../domain/clock';
import { ServiceUnavailableError, WorkflowNotFoundError, WorkflowStateConflictError, WorkflowTooLargeError } from '../domain/errors';
import { assertDependencyCount } from './build-workflow';
import { DueEntry } from '../domain/task';
import type { WorkflowStatus } from '../domain/workflow';
import { registeredTaskTypes } from '../handlers/registry';
import { PayloadChecks } from '../handlers/payload-schemas';
import { SchedulerMetrics } from '../observability/metrics';
import type { SchedulingGateway, TaskEndPublisher } from './ports';
import type { ResultWaiters } from './result-waiters';
import type { WaitOptions } from './task-service';
import { Store } from '../storage/store';
import { buildWorkflow } from './build-workflow';
import type { SubmitOptions } from './build-task';
import { checkTraceparent } from '../contract/traceparent';
import { inSubmissionSpan, SubmissionSpan, TaskSpans } from '../observability/task-spans';
import { dueEntryOf } from './submit-tasks';

export interface WorkflowServiceDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  gateway: SchedulingGateway;
  /** Backpressure at submission, as for single tasks (all of the workflow's tasks count). */
  guard?: SubmissionGuard;
  /** Submission spans (tracing configured); absent or null: none. */
  spans?: TaskSpans | null;
  /** The payload checks at submission (shared by the services); absent: the built-ins' only. */
  payloads?: PayloadChecks;
  /** The `?wait=` long polls; absent: a wait answers at once. */
  waiters?: ResultWaiters;
  /** Where workflow cancels are announced (the waiters listen); absent: not announced. */
  taskEnds?: TaskEndPublisher;
}

/** Response of a workflow cancel: `code` is the HTTP status the REST API answers with. */
export interface WorkflowCancelResponse {
  code: 200 | 202;
  body: { workflow_id: string; status: WorkflowStatus; cancel_requested: true; running_task_ids: string[] };
}

/**
 * Workflow operations (docs/DESIGN.md §8), beside {@link TaskService} and used the same way by REST
 * and the actor-message API: submit a DAG (validated, stored atomically, roots handed to their
 * partition owners), read one with its tasks, list, cancel. Execution needs nothing here: release
 * of BLOCKED tasks and failure propagation happen in the store, in the transaction that ends the
 * upstream task, and the dispatcher hands released tasks to their owners.
 */
export class WorkflowService {
  private readonly validator = new SchemaValidator();
  private readonly taskTypes: Set<string>;
  private readonly payloads: PayloadChecks;
  private accepting = true;

  constructor(private readonly deps: WorkflowServiceDeps) {
    this.taskTypes = new Set(registeredTaskTypes(deps.config.handlers));
    this.payloads = deps.payloads ?? new PayloadChecks(deps.config.handlers);
  }

  /**
   * Validates and stores a workflow: all tasks and edges in one atomic store operation, or none.
   * @returns 202 body: `workflow_id`, `workflow_name`, `status` RUNNING, `tasks` (local id → first
   *   state: PENDING or SCHEDULED for roots, BLOCKED for the rest) and `task_ids` (local id → task id)
   * @throws WorkflowTooLargeError (413) above `workflowMaxTasks`; ValidationError (400, field path
   *   `tasks[i].…`) for a bad field; InvalidWorkflowError (400) for a bad graph, naming the ids;
   *   UnknownTaskTypeError (400); PayloadTooLargeError (413); ServiceUnavailableError (503);
   *   ValidationError on `traceparent` for a malformed `options.traceparent` (applies to every task).
   *   `body` is validated here whatever its declared type: REST and the actor messages hand it over unchecked.
   */
  submit(body: WorkflowSubmissionBody, caller: Caller = OPEN_CALLER, options: SubmitOptions = {}): Promise<WorkflowAck> {
    return inSubmissionSpan(this.deps.spans, this.deps.clock, 'submit workflow', options.traceparent, (span) =>
      this.submitIn(span, body, caller, options),
    );
  }

  /** {@link submit} inside its submission span (null: not tracing). */
  private async submitIn(
    span: SubmissionSpan | null,
    body: WorkflowSubmissionBody,
    caller: Caller,
    options: SubmitOptions,
  ): Promise<WorkflowAck> {
    if (!this.accepting) throw new ServiceUnavailableError('shutting down');
    const checked = checkTraceparent(options.traceparent);
    // While the service traces, the submission span is the trace context kept with every task.
    const traceparent = span?.traceparent ?? checked;
    // The size limit first, so a huge body is refused before it is validated item by item.
    const count: unknown = (body as { tasks?: unknown } | null)?.tasks; // not validated yet
    if (Array.isArray(count) && count.length > this.deps.config.workflowMaxTasks) {
      throw new WorkflowTooLargeError(this.deps.config.workflowMaxTasks, count.length);
    }
    if (Array.isArray(count)) assertDependencyCount(count, this.deps.config.workflowMaxDependencies);
    this.validator.assert(workflowSubmissionSchema, body);
    const submission = withCallerTenant(body, caller);
    // Tasks inherit the workflow's tenant. One naming another is refused: for a tenant's key with
    // the key's message here, for anyone else by buildWorkflow.
    const scoped = {
      ...submission,
      tasks: submission.tasks.map((t, i) =>
        t.metadata?.tenant_id === undefined ? t : withCallerTenant(t, caller, `tasks[${i}].metadata`),
      ),
    };
    const built = buildWorkflow(scoped, this.deps.clock.now(), this.deps.config, this.taskTypes, this.payloads);
    // One trace context for the whole DAG: every task's attempts join the submitter's trace.
    const workflow = traceparent === null ? built : { ...built, tasks: built.tasks.map((t) => ({ ...t, traceparent })) };
    span?.describe(workflow.tasks, workflow.id);
    const guard = this.deps.guard;
    const held = guard?.admit(workflow.tasks, this.deps.clock.now(), { overflow: false }); // a DAG is never held in part
    let seqs: number[];
    try {
      seqs = await this.deps.store.insertWorkflow(workflow);
      guard?.stored(workflow.tasks);
    } finally {
      if (held) guard?.settle(workflow.tasks, held);
    }
    const roots: DueEntry[] = [];
    for (const [i, t] of workflow.tasks.entries()) {
      this.deps.metrics.submitted.inc({ task_type: t.taskType });
      if (t.state !== 'BLOCKED') {
        roots.push(dueEntryOf(t, seqs[i]));
      }
    }
    this.deps.gateway.tasksStored(roots);
    return workflowAckJson(workflow);
  }

  /**
   * A workflow with its status, timestamps, the `tasks` and `task_ids` maps of the submission's
   * answer (current states), counts by state and `task_details` (per task: local and task id,
   * state, dependencies, timings, error — `upstream_failed` for tasks cancelled by an upstream
   * failure). @throws WorkflowNotFoundError
   */
  async get(id: string, caller: Caller = OPEN_CALLER): Promise<WorkflowView> {
    const workflow = await this.deps.store.getWorkflow(id);
    if (!workflow || !canAccess(caller, workflow.tenantId)) throw new WorkflowNotFoundError(id);
    return workflowJson(workflow, await this.deps.store.getWorkflowTasks(id));
  }

  /**
   * {@link get} as a long poll (`?wait=`): answers as soon as the workflow is terminal (SUCCEEDED,
   * FAILED, CANCELLED), at once if it already is, otherwise after `wait.timeoutMs` with its current
   * state. Woken by the end of any of its tasks (the last one ends it) and by its cancel.
   * @throws WorkflowNotFoundError; TooManyWaitersError (429) when this node holds `waits.maxWaiters`
   */
  async getWhenEnded(id: string, caller: Caller, wait: WaitOptions): Promise<WorkflowView> {
    const read = () => this.get(id, caller);
    const first = await read();
    if (!this.deps.waiters) return first;
    return this.deps.waiters.wait(first, {
      kind: 'workflow',
      id,
      taskIds: Object.values(first.task_ids ?? {}),
      timeoutMs: wait.timeoutMs,
      read,
      done: (v) => v.status !== 'RUNNING',
      ...(wait.signal ? { signal: wait.signal } : {}),
    });
  }

  /**
   * Lists workflows newest first, without their tasks. `query`: {status, tenant, limit (1..1000,
   * default 50), cursor}. @throws ValidationError for a bad filter, limit or cursor
   */
  async list(query: ServiceQuery<ListWorkflowsQuery>, caller: Caller = OPEN_CALLER): Promise<WorkflowPageView> {
    const q = limitAsString<ListWorkflowsQuery>(query);
    this.validator.assertQuery(listWorkflowsQuerySchema, q);
    const limit = pageLimit(q.limit);
    const page = await this.deps.store.listWorkflows({
      status: q.status,
      tenantId: tenantFilter(caller, q.tenant),
      cursor: q.cursor,
      limit,
    });
    return { workflows: page.workflows.map((w) => workflowJson(w)), next_cursor: page.nextCursor };
  }

  /**
   * Cancels a RUNNING workflow: every task not yet started is CANCELLED at once (200 when that was
   * all); RUNNING tasks get their handler's signal aborted through the cancel-running path and the
   * workflow ends CANCELLED when they have stopped (202, `running_task_ids`).
   * @throws WorkflowNotFoundError; WorkflowStateConflictError (409) for a finished workflow
   */
  async cancel(id: string, caller: Caller = OPEN_CALLER): Promise<WorkflowCancelResponse> {
    if (!caller.admin) {
      const workflow = await this.deps.store.getWorkflow(id);
      if (!workflow || !canAccess(caller, workflow.tenantId)) throw new WorkflowNotFoundError(id);
    }
    const res = await this.deps.store.cancelWorkflow(id, this.deps.clock.now());
    if (res.kind === 'not_found') throw new WorkflowNotFoundError(id);
    if (res.kind === 'conflict') throw new WorkflowStateConflictError(id, res.workflow.status, 'cancel');
    for (const r of res.running) this.deps.gateway.abortRunning(r.taskId, r.attempt);
    // The tasks it cancelled, and the workflow itself when nothing was running, ended now.
    this.deps.taskEnds?.publish({ taskIds: [], workflowIds: [id] });
    return {
      code: res.running.length === 0 ? 200 : 202,
      body: { workflow_id: id, status: res.workflow.status, cancel_requested: true, running_task_ids: res.running.map((r) => r.taskId) },
    };
  }

  /** Refuses new workflows from now on (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
  }
}
