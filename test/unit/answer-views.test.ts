/**
 * The answer views of src/contract/answer-json.ts name, for the SDK, shapes the services build
 * inline: these compile-time checks fail the build of the tests when a service's answer and its
 * view drift apart (each must be assignable to the other).
 */
import { expect } from 'chai';
import type {
  CheckpointSavedView,
  CompletionView,
  ConcurrencyLimitDeleteView,
  CronDeleteView,
  DeadLetterDeleteView,
  DeadLetterReplayView,
  HeartbeatView,
  ProgressSavedView,
  RateLimitDeleteView,
  TaskCancelView,
  WorkflowCancelView,
} from '../../src/contract/answer-json';
import type { CancelResponse, TaskService } from '../../src/services/task-service';
import type { WorkflowCancelResponse } from '../../src/services/workflow-service';
import type { CheckpointAnswer, CompletionAnswer, HeartbeatAnswer, ProgressAnswer } from '../../src/services/external-task-service';
import type { CronService } from '../../src/services/cron-service';
import type { TenantAdmin } from '../../src/services/tenant-admin';
import type { ConcurrencyAdmin } from '../../src/services/concurrency-admin';

/** `true` when A and B are assignable both ways, else `never` (so `const x: Same<A, B> = true` fails to compile). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
type Answer<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

describe('answer views follow the services', () => {
  it('every view is the shape its service answers', () => {
    const checks: boolean[] = [
      true satisfies Same<CancelResponse['body'], TaskCancelView>,
      true satisfies Same<WorkflowCancelResponse['body'], WorkflowCancelView>,
      true satisfies Same<Answer<TaskService['replayDeadLetter']>, DeadLetterReplayView>,
      true satisfies Same<Answer<TaskService['deleteDeadLetter']>, DeadLetterDeleteView>,
      true satisfies Same<Answer<CronService['delete']>, CronDeleteView>,
      true satisfies Same<Answer<TenantAdmin['deleteRateLimit']>, RateLimitDeleteView>,
      true satisfies Same<Answer<ConcurrencyAdmin['delete']>, ConcurrencyLimitDeleteView>,
      true satisfies Same<CompletionAnswer, CompletionView>,
      true satisfies Same<HeartbeatAnswer, HeartbeatView>,
      true satisfies Same<CheckpointAnswer, CheckpointSavedView>,
      true satisfies Same<ProgressAnswer, ProgressSavedView>,
    ];
    expect(checks.every(Boolean)).to.equal(true);
  });
});
