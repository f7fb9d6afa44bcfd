/**
 * The request types are derived from the JSON Schemas (src/contract/types.ts). These checks run at
 * compile time: each `@ts-expect-error` line must fail to type-check, so a type that stopped
 * following its schema (become looser) breaks the build of the tests.
 */
import { expect } from 'chai';
import type { TaskPatchBody, TaskSubmissionBody } from '../../src/contract/types';

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
});
