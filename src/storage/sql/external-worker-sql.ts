/**
 * The SQL condition "this attempt runs on one of the service's own workers", not on an external
 * consumer (a stream's `external:…` or an HTTP pull worker's `http:…` worker id,
 * src/domain/external-queues.ts), for both SQL adapters.
 */
import { EXTERNAL_WORKER_PREFIX, HTTP_WORKER_PREFIX } from '../../domain/external-queues';

/**
 * `(worker_id IS NULL OR (worker_id NOT LIKE 'external:%' AND worker_id NOT LIKE 'http:%'))`;
 * `column` may carry a prefix such as `t.worker_id`. The prefixes are constants without `%`, `_`
 * or quotes, so they need no escaping.
 */
export function sqlNotExternalWorker(column = 'worker_id'): string {
  const notLike = [EXTERNAL_WORKER_PREFIX, HTTP_WORKER_PREFIX].map((p) => `${column} NOT LIKE '${p}%'`).join(' AND ');
  return `(${column} IS NULL OR (${notLike}))`;
}
