/**
 * HTTP helpers of the store-fault tests on real service processes: a POST that keeps the status,
 * body and `Retry-After`, `/readyz`, a wait for an event of the system under test, the service's
 * error lines, and the shape of a 503 for a store fault.
 */
import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import type { ServiceProcess } from './service-process';

/** One answer to a POST: `startedAt` is performance.now() when the request was sent. */
export interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
  startedAt: number;
}

/** POSTs `body` as JSON to `url`; never throws for an HTTP status. */
export async function post(url: string, body: unknown): Promise<Answer> {
  const startedAt = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, retryAfter: res.headers.get('retry-after'), startedAt };
}

/** The service's `/readyz`: status and JSON body. */
export async function readyz(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: await res.json() };
}

/** Waits for `cond` (an event of the system under test), failing after `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The service's error-level log lines (pino level 50). */
export function errorLines(svc: ServiceProcess): string[] {
  return svc
    .output()
    .split('\n')
    .filter((l) => l.includes('"level":50'));
}

/** A 503 for a store fault: the code, the fault, and a Retry-After of at least 1 s. */
export function expectStoreUnavailable(a: Answer, fault: string): void {
  expect(a.status, JSON.stringify(a.body)).to.equal(503);
  expect(a.body.error.code).to.equal('STORE_UNAVAILABLE');
  expect(a.body.error.details.fault).to.equal(fault);
  expect(Number(a.retryAfter)).to.be.at.least(1);
}
