import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Where the browser tests write their screenshots, for a human to look at (git-ignored). */
export const ARTIFACTS = path.resolve(__dirname, '..', '..', '..', 'test', 'artifacts');

/**
 * Skips the suite when Chromium is missing outside CI (with a message), fails it in CI (`CI` set):
 * the browser tests must not pass silently where they are meant to run.
 */
export function requireChromium(ctx: Mocha.Context): void {
  if (fs.existsSync(CHROMIUM)) return;
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) — .ci/run does`);
  console.log(`      skipped: ${CHROMIUM} not found (install with apt-get install -y chromium; with CI set this fails)`);
  ctx.skip();
}

/** Headless Debian Chromium driven by playwright-core (no browser download). */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/**
 * What a dashboard browser test does against a running service: `call` the REST API with `key`,
 * `waitTask` (poll a task until `done` holds, bounded), `show` a page of the dashboard loaded
 * afresh (the query string makes each load a real navigation; waits for the shell's `data-ready`),
 * and `shot` a full-page screenshot into {@link ARTIFACTS}. `url()` and `page()` are read at each call.
 */
export function dashboardDriver(url: () => string, page: () => Page, key: string) {
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url()}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const waitTask = async (id: string, done: (t: any) => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = (await call('GET', `/api/v1/tasks/${id}?include=attempts`)).body;
      if (done(t)) return t;
      if (Date.now() > deadline) throw new Error(`task ${id} not in the expected state: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  let loads = 0;
  const show = async (hash: string) => {
    await page().goto(`${url()}/ui?load=${++loads}#${hash}`);
    await page().waitForSelector(`body[data-ready="${hash.split('?')[0]}"]`);
  };
  const shot = async (name: string) => page().screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  return { call, waitTask, show, shot };
}
