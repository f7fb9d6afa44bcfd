import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LeasedTask } from '../../src/sdk/worker/types';

/** One request the fake scheduler received. */
export interface SeenRequest {
  method: string;
  path: string;
  body: any;
}

/** An answer the test forces for a request: `{status, body, headers?}`, or `{hangUp: true}` (the connection closed, no answer); undefined keeps the default. */
export type Override = (
  req: SeenRequest,
) => { status: number; body: unknown; headers?: Record<string, string> } | { hangUp: true } | undefined;

/**
 * A stand-in for the scheduler's pull endpoints on node:http, for the worker SDK's tests: lease
 * requests are held (long poll) until the test adds tasks (or the client goes away); reports answer
 * 200 unless `override` says otherwise. Every request is recorded and announced ('request').
 */
export class FakePullServer extends EventEmitter {
  readonly requests: SeenRequest[] = [];
  private readonly queue: LeasedTask[] = [];
  private readonly polls: Array<{ max: number; answer: (tasks: LeasedTask[]) => void }> = [];
  private server: http.Server | null = null;
  private nextId = 1;
  override: Override = () => undefined;
  /** Lease requests currently held open. */
  get heldPolls(): number {
    return this.polls.length;
  }
  url = '';

  async listen(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const p of this.polls.splice(0)) p.answer([]);
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  /** Queues tasks (defaults filled in) and hands them to held polls. @returns the tasks */
  add(...tasks: Array<Partial<LeasedTask>>): LeasedTask[] {
    const full = tasks.map((t) => ({
      task_id: `t-${this.nextId++}`,
      task_type: 'work',
      queue: 'q',
      tenant_id: 'default',
      payload: {},
      attempt: 1,
      lease_expires_at: new Date(Date.now() + 30_000).toISOString(),
      timeout_ms: 60_000,
      idempotency_key: null,
      checkpoint: null,
      traceparent: null,
      ...t,
    }));
    this.queue.push(...full);
    this.serve();
    return full;
  }

  /** Requests to `path` ending with `suffix` (e.g. '/complete'). */
  seen(suffix: string): SeenRequest[] {
    return this.requests.filter((r) => r.path.endsWith(suffix));
  }

  /** Resolves with the first request (past or future) for which `match` holds. */
  waitFor(match: (r: SeenRequest) => boolean, timeoutMs = 10_000): Promise<SeenRequest> {
    const found = this.requests.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('request', on);
        reject(new Error('timed out waiting for a request'));
      }, timeoutMs);
      const on = (r: SeenRequest) => {
        if (!match(r)) return;
        clearTimeout(timer);
        this.off('request', on);
        resolve(r);
      };
      this.on('request', on);
    });
  }

  /** Resolves once `n` requests end with `suffix`. */
  async waitForCount(suffix: string, n: number, timeoutMs = 10_000): Promise<SeenRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.seen(suffix).length < n) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} ${suffix} requests (saw ${this.seen(suffix).length})`);
      await new Promise((r) => this.once('request', r));
    }
    return this.seen(suffix);
  }

  private serve(): void {
    while (this.polls.length > 0 && this.queue.length > 0) {
      const poll = this.polls.shift()!;
      poll.answer(this.queue.splice(0, poll.max));
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, text: string): void {
    const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', body: text ? JSON.parse(text) : null };
    this.requests.push(seen);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const forced = this.override(seen);
    this.emit('request', seen);
    if (forced && 'hangUp' in forced) return void res.socket?.destroy();
    if (forced) return send(forced.status, forced.body, forced.headers);
    if (seen.path.endsWith('/lease')) {
      const poll = { max: seen.body.max ?? 1, answer: (tasks: LeasedTask[]) => send(200, { tasks }) };
      this.polls.push(poll);
      res.on('close', () => {
        const i = this.polls.indexOf(poll);
        if (i >= 0) this.polls.splice(i, 1);
      });
      this.serve();
      return;
    }
    const id = seen.path.split('/')[4];
    if (seen.path.endsWith('/heartbeat'))
      return send(200, { task_id: id, attempt: seen.body.attempt, lease_expires_at: new Date(Date.now() + 30_000).toISOString() });
    if (seen.path.endsWith('/complete'))
      return send(200, { task_id: id, attempt: seen.body.attempt, status: seen.body.error ? 'FAILED' : 'SUCCEEDED' });
    return send(200, { task_id: id, attempt: seen.body?.attempt });
  }
}

/** The API's 409 for a stale attempt. */
export const attemptConflict = {
  status: 409,
  body: { error: { code: 'ATTEMPT_CONFLICT', message: 'not the running attempt', details: {} } },
};
