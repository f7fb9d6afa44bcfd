import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';

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
