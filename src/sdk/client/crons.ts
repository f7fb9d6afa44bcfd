import type { ApiClient } from '../transport';
import { apiPath } from './paths';
import { pages } from './pages';
import type {
  CronCreateBody,
  CronDeleteView,
  CronPageView,
  CronPatchBody,
  CronPreviewBody,
  CronPreviewView,
  CronRunPageView,
  CronRunsQuery,
  CronRunView,
  CronView,
  ListCronsQuery,
} from './types';

/** `client.crons`: recurring tasks (docs/API.md "Cron tasks"). */
export class CronsApi {
  constructor(private readonly http: ApiClient) {}

  /** `POST /api/v1/cron-tasks` (`preview: N` adds the next N fire times). @throws BadRequestError (`CRON_NEVER_FIRES`, `VALIDATION_FAILED`) */
  async create(cron: CronCreateBody, options: { preview?: number } = {}): Promise<CronView> {
    return (await this.http.request<CronView>('POST', apiPath('cron-tasks'), { body: cron, query: { preview: options.preview } })).body;
  }

  /** `GET /api/v1/cron-tasks/{id}`. @throws NotFoundError (`CRON_NOT_FOUND`) */
  async get(id: string, options: { preview?: number } = {}): Promise<CronView> {
    return this.http.get<CronView>(apiPath('cron-tasks', id), { preview: options.preview });
  }

  /** `GET /api/v1/cron-tasks`: one page, newest first. */
  async list(query: ListCronsQuery = {}): Promise<CronPageView> {
    return this.http.get<CronPageView>(apiPath('cron-tasks'), query);
  }

  /** Every cron task the filters match, following `next_cursor`. */
  iterate(query: Omit<ListCronsQuery, 'cursor'> = {}): AsyncGenerator<CronView> {
    return pages(
      (cursor) => this.list({ ...query, cursor }),
      (p) => p.cron_tasks,
    );
  }

  /** `PATCH /api/v1/cron-tasks/{id}`: any definition or template field. */
  async patch(id: string, changes: CronPatchBody): Promise<CronView> {
    return this.http.patch<CronView>(apiPath('cron-tasks', id), changes);
  }

  /** Pauses a cron task (`{enabled: false}`). */
  async pause(id: string): Promise<CronView> {
    return this.patch(id, { enabled: false });
  }

  /** Resumes a paused cron task from now (`{enabled: true}`; the paused period is not caught up). */
  async resume(id: string): Promise<CronView> {
    return this.patch(id, { enabled: true });
  }

  /** `DELETE /api/v1/cron-tasks/{id}` (tasks it already created stay). */
  async delete(id: string): Promise<CronDeleteView> {
    return (await this.http.request<CronDeleteView>('DELETE', apiPath('cron-tasks', id))).body;
  }

  /** `GET /api/v1/cron-tasks/{id}/runs`: fire records, latest first. */
  async runs(id: string, query: CronRunsQuery = {}): Promise<CronRunPageView> {
    return this.http.get<CronRunPageView>(apiPath('cron-tasks', id, 'runs'), query);
  }

  /** Every fire record of a cron task, following `next_cursor`. */
  iterateRuns(id: string, query: Omit<CronRunsQuery, 'cursor'> = {}): AsyncGenerator<CronRunView> {
    return pages(
      (cursor) => this.runs(id, { ...query, cursor }),
      (p) => p.runs,
    );
  }

  /** `POST /api/v1/cron-tasks/preview`: the next fire times of an expression (nothing stored). */
  async preview(body: CronPreviewBody): Promise<CronPreviewView> {
    return (await this.http.request<CronPreviewView>('POST', apiPath('cron-tasks', 'preview'), { body })).body;
  }
}
