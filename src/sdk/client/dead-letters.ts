import type { ApiClient } from '../transport';
import { apiPath } from './paths';
import { pages } from './pages';
import type { DeadLetterDeleteView, DeadLetterQuery, DeadLetterReplayView, TaskPageView, TaskView } from './types';

/** `client.deadLetters`: tasks that used up their retries (docs/FAILURES.md). */
export class DeadLettersApi {
  constructor(private readonly http: ApiClient) {}

  /** `GET /api/v1/dead-letter`: one page of DEAD tasks, newest first. */
  async list(query: DeadLetterQuery = {}): Promise<TaskPageView> {
    return this.http.get<TaskPageView>(apiPath('dead-letter'), query);
  }

  /** Every DEAD task the filters match, following `next_cursor`. */
  iterate(query: Omit<DeadLetterQuery, 'cursor'> = {}): AsyncGenerator<TaskView> {
    return pages(
      (cursor) => this.list({ ...query, cursor }),
      (p) => p.tasks,
    );
  }

  /** `POST /api/v1/dead-letter/{id}/replay`: run it again with a fresh retry budget. @throws ConflictError when it is not DEAD */
  async replay(id: string): Promise<DeadLetterReplayView> {
    return (await this.http.request<DeadLetterReplayView>('POST', apiPath('dead-letter', id, 'replay'))).body;
  }

  /** `DELETE /api/v1/dead-letter/{id}`: delete a DEAD task and its history. */
  async delete(id: string): Promise<DeadLetterDeleteView> {
    return (await this.http.request<DeadLetterDeleteView>('DELETE', apiPath('dead-letter', id))).body;
  }
}
