/**
 * The request types are derived from the JSON Schemas (src/contract/types.ts); the view types are
 * declared beside their mappers and must fit the response schemas of the OpenAPI document. These
 * checks run at compile time: each `@ts-expect-error` line must fail to type-check, so a type that
 * stopped following its schema (become looser) breaks the build of the tests.
 */
import { expect } from 'chai';
import type { FromSchema } from 'json-schema-to-ts';
import type { CronView } from '../../src/contract/cron-json';
import type { TaskView } from '../../src/contract/task-json';
import type { WorkflowView } from '../../src/contract/workflow-json';
import type {
  CronCreateBody,
  CronPatchBody,
  ExternalCompletionBody,
  ListCronsQuery,
  TaskPatchBody,
  TaskSubmissionBody,
  TenantPutBody,
  WorkflowSubmissionBody,
} from '../../src/contract/types';
import type { cronSchema, taskSchema, workflowSchema } from '../../src/api/openapi/responses';

/** `T` as a plain object type at every level (an interface is not assignable to an index signature; its plain copy is). */
type Plain<T> = T extends object ? { [K in keyof T]: Plain<T[K]> } : T;

describe('request types follow their JSON Schemas', () => {
  it('a task submission: required task_type, the enums and nullable fields of the schema', () => {
    const ok: TaskSubmissionBody = {
      task_type: 'email',
      priority: 'high',
      scheduled_at: null,
      concurrency_key: null,
      metadata: { tenant_id: 't' },
    };
    // @ts-expect-error task_type is required
    const noType: TaskSubmissionBody = { payload: {} };
    // @ts-expect-error priority outside the schema's enum
    const badPriority: TaskSubmissionBody = { task_type: 'email', priority: 'urgent' };
    // @ts-expect-error max_retries is an integer, not a string
    const badRetries: TaskSubmissionBody = { task_type: 'email', max_retries: '3' };
    // @ts-expect-error no field outside the schema (additionalProperties: false)
    const extra: TaskSubmissionBody = { task_type: 'email', name: 'x' };
    expect([ok, noType, badPriority, badRetries, extra].length).to.equal(5);
  });

  it('a task patch: only the three fields it may change', () => {
    const ok: TaskPatchBody = { priority: 'low' };
    // @ts-expect-error task_type cannot be changed
    const badField: TaskPatchBody = { task_type: 'other' };
    expect([ok, badField].length).to.equal(2);
  });

  it('a cron: required name, cron_expression and task_type; its enums; no task field it cannot have', () => {
    const ok: CronCreateBody = { name: 'n', cron_expression: '* * * * *', task_type: 'email', overlap_policy: 'queue', catch_up: 'all' };
    // @ts-expect-error name is required
    const noName: CronCreateBody = { cron_expression: '* * * * *', task_type: 'email' };
    // @ts-expect-error overlap_policy outside the schema's enum
    const badPolicy: CronCreateBody = { name: 'n', cron_expression: '* * * * *', task_type: 'email', overlap_policy: 'replace' };
    // @ts-expect-error a cron's tasks have no scheduled_at (the schedule decides)
    const scheduled: CronCreateBody = { name: 'n', cron_expression: '* * * * *', task_type: 'email', scheduled_at: null };
    const patch: CronPatchBody = { enabled: false };
    // @ts-expect-error enabled is a boolean
    const badPatch: CronPatchBody = { enabled: 'false' };
    // @ts-expect-error a query's `enabled` is the string REST gives
    const badQuery: ListCronsQuery = { enabled: true };
    expect([ok, noName, badPolicy, scheduled, patch, badPatch, badQuery].length).to.equal(7);
  });

  it('a workflow, a tenant and an external completion follow their schemas', () => {
    const ok: WorkflowSubmissionBody = { tasks: [{ task_id: 'a', task_type: 'email', dependencies: [] }] };
    // @ts-expect-error each task needs its workflow-local task_id
    const noLocalId: WorkflowSubmissionBody = { tasks: [{ task_type: 'email' }] };
    // @ts-expect-error workflow tasks take no idempotency_key
    const keyed: WorkflowSubmissionBody = { tasks: [{ task_id: 'a', task_type: 'email', idempotency_key: 'k' }] };
    const tenant: TenantPutBody = { weight: 2, rate_limit: null };
    // @ts-expect-error a rate limit needs rate_per_second
    const noRate: TenantPutBody = { rate_limit: { burst: 2 } };
    const done: ExternalCompletionBody = { attempt: 1, error: { message: 'boom', permanent: true } };
    // @ts-expect-error attempt is required (the fencing token)
    const noAttempt: ExternalCompletionBody = { result: 1 };
    // @ts-expect-error an error needs its message
    const noMessage: ExternalCompletionBody = { attempt: 1, error: { permanent: true } };
    expect([ok, noLocalId, keyed, tenant, noRate, done, noAttempt, noMessage].length).to.equal(8);
  });

  it('views fit the response schemas of the OpenAPI document and keep their required fields', () => {
    const task = {} as Plain<TaskView>;
    const cron = {} as Plain<CronView>;
    const workflow = {} as Plain<WorkflowView>;
    const taskFits: FromSchema<typeof taskSchema> = task;
    const cronFits: FromSchema<typeof cronSchema> = cron;
    const workflowFits: FromSchema<typeof workflowSchema> = workflow;
    // @ts-expect-error a cron view has its cron_id
    const noId: CronView = { ...cron, cron_id: undefined };
    // @ts-expect-error status is ACTIVE or PAUSED
    const badStatus: CronView = { ...cron, status: 'RUNNING' };
    // @ts-expect-error a task's status is one of its states
    const badState: TaskView = { ...task, status: 'DONE' };
    expect([taskFits, cronFits, workflowFits, noId, badStatus, badState].length).to.equal(6);
  });
});
