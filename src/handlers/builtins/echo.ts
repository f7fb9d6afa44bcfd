import { TaskHandler } from '../types';

/**
 * Returns its payload unchanged. When the payload is an object with `include_upstream_results:
 * true`, returns that object plus `upstream_results` (the results of its upstream workflow tasks,
 * by workflow-local id): a way to see what a workflow task received.
 */
export const echo: TaskHandler = (payload, ctx) => {
  if (
    payload !== null &&
    typeof payload === 'object' &&
    (payload as { include_upstream_results?: unknown }).include_upstream_results === true
  ) {
    return { ...(payload as Record<string, unknown>), upstream_results: ctx.upstreamResults };
  }
  return payload;
};
