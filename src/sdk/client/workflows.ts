import type { ApiClient } from '../transport';
import { apiPath } from './paths';
import { pages } from './pages';
import type {
  ListWorkflowsQuery,
  SubmitOptions,
  WaitOptions,
  WorkflowAck,
  WorkflowCancelView,
  WorkflowPageView,
  WorkflowSubmissionBody,
  WorkflowView,
} from './types';
import { TERMINAL_WORKFLOW_STATUSES, waitForStatus } from './wait';

/** `client.workflows`: DAGs of tasks (docs/API.md "Workflows"). */
export class WorkflowsApi {
  constructor(private readonly http: ApiClient) {}

  /** `POST /api/v1/workflows`: stored atomically; roots start, the rest wait BLOCKED. @throws BadRequestError (`INVALID_WORKFLOW`) */
  async submit(workflow: WorkflowSubmissionBody, options: SubmitOptions = {}): Promise<WorkflowAck> {
    const headers: Record<string, string> = options.traceparent ? { traceparent: options.traceparent } : {};
    return (await this.http.request<WorkflowAck>('POST', apiPath('workflows'), { body: workflow, headers })).body;
  }

  /** `GET /api/v1/workflows/{id}` with each task's state. @throws NotFoundError (`WORKFLOW_NOT_FOUND`) */
  async get(id: string): Promise<WorkflowView> {
    return this.http.get<WorkflowView>(apiPath('workflows', id));
  }

  /** `GET /api/v1/workflows`: one page, newest first, without their tasks. */
  async list(query: ListWorkflowsQuery = {}): Promise<WorkflowPageView> {
    return this.http.get<WorkflowPageView>(apiPath('workflows'), query);
  }

  /** Every workflow the filters match, following `next_cursor`. */
  iterate(query: Omit<ListWorkflowsQuery, 'cursor'> = {}): AsyncGenerator<WorkflowView> {
    return pages(
      (cursor) => this.list({ ...query, cursor }),
      (p) => p.workflows,
    );
  }

  /** `POST /api/v1/workflows/{id}/cancel` (202 while `running_task_ids` are being aborted). @throws ConflictError when it ended */
  async cancel(id: string): Promise<WorkflowCancelView> {
    return (await this.http.request<WorkflowCancelView>('POST', apiPath('workflows', id, 'cancel'))).body;
  }

  /**
   * Waits until the workflow ends (SUCCEEDED, FAILED or CANCELLED): long polls of
   * `GET /api/v1/workflows/{id}?wait=S`, plain polling against a server without them.
   * @throws WaitTimeoutError (with the last view) after `timeoutMs`
   */
  async wait(id: string, options: WaitOptions): Promise<WorkflowView> {
    return waitForStatus<WorkflowView>(this.http, id, apiPath('workflows', id), TERMINAL_WORKFLOW_STATUSES, options);
  }
}
