/**
 * The request bodies of the specification's API examples, byte for byte as the specification
 * gives them (its indentation and spacing included), sent as they are by
 * spec-examples.test.ts. Do not reformat: the point is that a user can paste them.
 */

/** `POST /api/v1/tasks`: a welcome email, scheduled, with retries and an idempotency key. */
export const SUBMIT_TASK = `{
  "task_type": "send_email",
  "payload": {"to": "user@example.com", "template": "welcome", "variables": {"name": "John"}},
  "priority": "high",
  "scheduled_at": "2024-01-15T10:00:00Z",
  "max_retries": 3,
  "retry_backoff": "exponential",
  "timeout_seconds": 300,
  "idempotency_key": "welcome-email-user-123",
  "metadata": {"tenant_id": "acme-corp", "correlation_id": "req-abc-123"}
}`;

/** `POST /api/v1/cron-tasks`: a report every weekday at 9:00 in New York. */
export const CREATE_CRON = `{
  "name": "daily-report",
  "cron_expression": "0 9 * * MON-FRI",
  "timezone": "America/New_York",
  "task_type": "generate_report",
  "payload": {"report_type": "daily_sales"},
  "overlap_policy": "skip"
}`;

/** `POST /api/v1/workflows`: user onboarding, a diamond of four tasks. */
export const SUBMIT_WORKFLOW = `{
  "workflow_name": "user-onboarding",
  "tasks": [
    {"task_id": "create-account", "task_type": "create_account", "payload": {"email": "user@example.com"}, "dependencies": []},
    {"task_id": "send-welcome-email", "task_type": "send_email", "payload": {"template": "welcome"}, "dependencies": ["create-account"]},
    {"task_id": "setup-defaults", "task_type": "setup_defaults", "payload": {}, "dependencies": ["create-account"]},
    {"task_id": "notify-admin", "task_type": "notify", "payload": {}, "dependencies": ["send-welcome-email", "setup-defaults"]}
  ]
}`;

/** The task types the examples use: none is built in, so a deployment registers them (`handlers`). */
export const SPEC_TASK_TYPES = ['send_email', 'generate_report', 'create_account', 'setup_defaults', 'notify'] as const;

/** The fields the specification shows for `GET /api/v1/tasks/{task_id}`. */
export const TASK_VIEW_FIELDS = [
  'task_id',
  'task_type',
  'status',
  'priority',
  'created_at',
  'scheduled_at',
  'started_at',
  'completed_at',
  'duration_ms',
  'attempts',
  'worker_id',
  'result',
  'metadata',
] as const;
