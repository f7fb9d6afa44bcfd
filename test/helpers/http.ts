/** Minimal JSON client for tests against a real server. */
export async function http(method: string, url: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/**
 * Polls `GET /api/v1/tasks/{id}` until `done(task)` holds, failing after `timeoutMs`. This waits
 * for a condition of the system under test (an event), not for a duration.
 */
export async function waitForTask(baseUrl: string, id: string, done: (task: any) => boolean, timeoutMs = 15_000, query = ''): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any = null;
  for (;;) {
    const res = await http('GET', `${baseUrl}/api/v1/tasks/${id}${query}`);
    last = res.body;
    if (res.status === 200 && done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`task ${id} did not reach the expected state; last seen: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const isTerminal = (t: any): boolean => ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'].includes(t.status);

/**
 * Polls `GET /api/v1/workflows/{id}` until `done(workflow)` holds (default: no longer RUNNING),
 * failing after `timeoutMs`: waits for the workflow's state, not for a duration.
 */
export async function waitForWorkflow(
  baseUrl: string,
  id: string,
  done: (workflow: any) => boolean = (w) => w.status !== 'RUNNING',
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any = null;
  for (;;) {
    const res = await http('GET', `${baseUrl}/api/v1/workflows/${id}`);
    last = res.body;
    if (res.status === 200 && done(res.body)) return res.body;
    if (Date.now() > deadline)
      throw new Error(`workflow ${id} did not reach the expected state; last seen: ${JSON.stringify(last)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
