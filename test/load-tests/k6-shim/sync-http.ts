/**
 * Synchronous HTTP for the k6 stand-in (k6's `http.get` returns the response, it does not return a
 * promise): the request goes to a worker thread that runs `fetch`, while the calling thread
 * blocks in `Atomics.wait` until the worker has posted the answer, which it then takes with
 * `receiveMessageOnPort`. Only for the smoke test's few requests; never in `src/`.
 */
import { MessageChannel, MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

export interface SyncRequest {
  method: string;
  url: string;
  body: string | null;
  headers: Record<string, string>;
  /** Whole-request bound in ms. */
  timeoutMs: number;
}

export interface SyncResponse {
  status: number; // 0 when the request failed (error set)
  headers: Record<string, string>; // lower-case names
  body: string | null;
  /** ms from sending to the full body, and to the response head. */
  durationMs: number;
  waitingMs: number;
  error: string | null;
}

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const flag = new Int32Array(workerData.flag);
const port = workerData.port;
port.on('message', async (req) => {
  const t0 = performance.now();
  let out;
  try {
    const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body ?? undefined, signal: AbortSignal.timeout(req.timeoutMs) });
    const tHead = performance.now();
    const body = await res.text();
    out = { status: res.status, headers: Object.fromEntries(res.headers), body, durationMs: performance.now() - t0, waitingMs: tHead - t0, error: null };
  } catch (err) {
    out = { status: 0, headers: {}, body: null, durationMs: performance.now() - t0, waitingMs: 0, error: String(err && err.message || err) };
  }
  port.postMessage(out);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

/** One worker thread serving blocking requests; `close()` ends it. */
export class SyncHttp {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { flag: this.flag.buffer, port: port2 }, transferList: [port2] });
    this.worker.unref();
  }

  /** Sends `req` and blocks until the answer (or `timeoutMs` + 5 s, then throws). */
  request(req: SyncRequest): SyncResponse {
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(req);
    const waited = Atomics.wait(this.flag, 0, 0, req.timeoutMs + 5000);
    const msg = receiveMessageOnPort(this.port);
    if (!msg) throw new Error(`${req.method} ${req.url}: no answer from the HTTP worker (${waited})`);
    return msg.message as SyncResponse;
  }

  close(): Promise<number> {
    this.port.close();
    return this.worker.terminate();
  }
}

/** Blocks the thread for `ms` (k6's `sleep` is synchronous too). */
export function blockFor(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
