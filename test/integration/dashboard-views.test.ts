import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Dialog, Page } from 'playwright-core';
import { ARTIFACTS, dashboardDriver, launchChromium, requireChromium } from '../helpers/chromium';
import { hashApiKey } from '../../src/tenancy/api-keys';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const KEY = 'dashboard-views-key-1';
/** The browser's zone: the page must not show times in it alone. */
const BROWSER_ZONE = 'Asia/Tokyo';
const UTC_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;

/**
 * The dashboard's views of times, the task list, actions, replay cycles, smoothed rates, progress
 * and logs, end to end: a real service process with an admin key, headless Chromium in the
 * Asia/Tokyo zone. Each action's outcome is read back through the REST API; each view is
 * screenshot into test/artifacts/ (git-ignored) for a human to look at.
 */
describe('dashboard views in a browser (real service, headless Chromium)', function () {
  this.timeout(60_000);
  const dir = tempDir();
  const release = path.join(dir.path, 'release-progress');
  let svc: ServiceProcess;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const dialogs: string[] = [];
  let acceptDialogs = true;

  const {
    call,
    waitTask: waitFor,
    show,
    shot,
  } = dashboardDriver(
    () => svc.url,
    () => page,
    KEY,
  );
  const submit = async (body: Record<string, unknown>): Promise<string> => (await call('POST', '/api/v1/tasks', body)).body.task_id;
  const waitTask = (id: string, done: (t: any) => boolean) => waitFor(id, done, 20_000);
  const texts = (selector: string) => page.$$eval(selector, (els) => els.map((e) => (e.textContent ?? '').trim()));

  before(async function () {
    requireChromium(this);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const progress = path.join(dir.path, 'progress.js');
    fs.writeFileSync(
      progress,
      [
        "const fs = require('node:fs');",
        'module.exports = async (payload, ctx) => {',
        "  ctx.progress({ done: 3, total: 10, message: 'copying rows' });",
        "  ctx.log('copied 3 rows');",
        '  while (!fs.existsSync(payload.release)) {',
        "    if (ctx.signal.aborted) throw new Error('aborted');",
        '    await new Promise((r) => setTimeout(r, 50));',
        '  }',
        "  return 'released';",
        '};',
      ].join('\n'),
    );
    const flaky = path.join(dir.path, 'flaky.js');
    fs.writeFileSync(
      flaky,
      [
        'module.exports = async (payload, ctx) => {',
        '  if (ctx.attempt === 1) {',
        "    ctx.log('first try', { rows: 0 });",
        "    throw Object.assign(new Error('upstream refused the connection while loading the nightly export of every customer row'), { code: 'E_UPSTREAM' });",
        '  }',
        "  ctx.log('second try', { rows: 12 });",
        "  return 'ok';",
        '};',
      ].join('\n'),
    );
    const env = serviceConfigEnv(dir.path, { apiKeys: [{ sha256: hashApiKey(KEY), admin: true }], handlers: { progress, flaky } });
    svc = await startServiceProcess(dir.path, env);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: BROWSER_ZONE });
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => void (m.type() === 'error' && pageErrors.push(`console: ${m.text()}`)));
    page.on('dialog', (d: Dialog) => {
      dialogs.push(d.message());
      void (acceptDialogs ? d.accept() : d.dismiss());
    });
    // The key, as the key form keeps it, in this tab's sessionStorage before any page loads.
    await page.addInitScript((k) => (globalThis as any).sessionStorage.setItem('scheduler.apiKey', k), KEY);
  });

  after(async () => {
    fs.writeFileSync(release, '');
    await browser?.close();
    await svc?.stop();
    dir.remove();
  });

  afterEach(() => {
    acceptDialogs = true;
    dialogs.length = 0;
    expect(pageErrors, 'errors in the page').to.deep.equal([]);
  });

  it("times say their zone: UTC on task pages, a cron's fires in the cron's own zone beside UTC (browser in Asia/Tokyo)", async () => {
    expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).to.equal(BROWSER_ZONE);
    const cron = (
      await call('POST', '/api/v1/cron-tasks?preview=5', {
        name: 'ny-report',
        cron_expression: '30 2 * * *',
        timezone: 'America/New_York',
        task_type: 'noop',
      })
    ).body;
    await show('crons');
    const row = `#cron-list tr[data-cron-id="${cron.cron_id}"]`;
    const next = (await page.textContent(`${row} time.zoned`))!.trim();
    // 02:30 New York is 07:30 UTC in winter (EST), 06:30 in summer (EDT); the UTC part is the API's instant.
    const utc = new Date(cron.next_fire_time).toISOString();
    expect(next).to.match(/^\d{4}-\d\d-\d\d 02:30:00 America\/New_York · (\d{4}-\d\d-\d\d )?0[67]:30:00 UTC$/);
    expect(next).to.contain(`${utc.slice(11, 19)} UTC`);
    expect(await page.getAttribute(`${row} time.zoned`, 'datetime')).to.equal(cron.next_fire_time);
    await page.click(row);
    await page.waitForSelector('#cron-detail li time');
    const fires = await texts('#cron-detail li time');
    expect(fires).to.have.length(5);
    for (const [i, f] of fires.entries()) {
      expect(f).to.match(/02:30:00 America\/New_York · /);
      expect(f).to.contain(`${cron.next_fire_times[i].slice(11, 19)} UTC`);
    }
    await shot('views-cron-zones');

    const id = await submit({ task_type: 'noop', scheduled_at: '2030-01-01T00:00:00Z' });
    await show(`tasks?id=${id}`);
    await page.waitForSelector('#task-detail h3:has-text("Attempts")');
    const shown = await texts('#task-detail dl.kv time');
    expect(shown.length).to.be.greaterThan(1);
    for (const t of shown) expect(t).to.match(UTC_TEXT);
    expect(await page.textContent('#task-detail dl.kv time[datetime="2030-01-01T00:00:00.000Z"]')).to.equal('2030-01-01 00:00:00 UTC');
    expect(await page.getAttribute('#task-detail dl.kv time[datetime="2030-01-01T00:00:00.000Z"]', 'title')).to.equal(
      '2030-01-01 09:00:00 Asia/Tokyo (browser)',
    );
    expect(await page.textContent('#task-actions label')).to.contain('new time (UTC)');
    for (const t of await texts('#task-list td time')) expect(t).to.match(UTC_TEXT);
  });

  it('task list: search by id and by idempotency key, tenant and error columns, pages that keep the filters', async () => {
    const paged: string[] = [];
    for (let i = 0; i < 5; i++) {
      paged.push(
        await submit({
          task_type: 'noop',
          queue: 'paging',
          scheduled_at: '2030-01-01T00:00:00Z',
          metadata: { tenant_id: i % 2 ? 'acme' : 'globex' },
        }),
      );
    }
    const keyed = await submit({ task_type: 'noop', scheduled_at: '2030-01-01T00:00:00Z', idempotency_key: 'order-42' });
    const failed = await submit({ task_type: 'flaky', max_retries: 0, metadata: { tenant_id: 'acme' } });
    await waitTask(failed, (t) => t.status === 'DEAD');

    // Tenant and error columns.
    await show('tasks?size=10');
    const failedRow = `#task-list tr[data-task-id="${failed}"]`;
    const errorCell = (await page.textContent(`${failedRow} .error-cell`))!;
    expect(errorCell.startsWith('E_UPSTREAM: upstream refused the connection')).to.equal(true);
    expect(errorCell.length).to.equal(60);
    expect(errorCell.endsWith('…')).to.equal(true);
    expect(await page.getAttribute(`${failedRow} .error-cell`, 'title')).to.contain('every customer row');
    expect(await page.textContent(`${failedRow}`)).to.contain('acme');
    await shot('views-task-list');

    // Pages of 2 of the queue paging: 2, 2, 1 newest first; Previous goes back; the filter holds on every page.
    await show('tasks?queue=paging&size=2');
    const pageIds = () => page.$$eval('#task-list tbody tr', (rows) => rows.map((r) => r.getAttribute('data-task-id')));
    const seen: string[][] = [await pageIds()];
    for (let n = 2; n <= 3; n++) {
      await page.click('#next-page');
      await page.waitForSelector(`#page-number:has-text("page ${n}")`);
      seen.push(await pageIds());
    }
    expect(await page.isDisabled('#next-page')).to.equal(true);
    expect(seen).to.deep.equal([paged.slice(3).reverse(), paged.slice(1, 3).reverse(), [paged[0]]]);
    await page.click('#prev-page');
    await page.waitForSelector('#page-number:has-text("page 2")');
    expect(await pageIds()).to.deep.equal(seen[1]);
    expect(await page.inputValue('#task-filters input[name=queue]')).to.equal('paging');
    expect(new Set(await texts('#task-list tbody td:nth-child(3)'))).to.deep.equal(new Set(['paging']));

    // Search by idempotency key, then by task id (the form keeps the other fields).
    await page.fill('#task-filters input[name=queue]', '');
    await page.fill('#task-filters input[name=q]', 'order-42');
    await page.click('#task-filters button[type=submit]');
    // The note names the search text: a note of an earlier search must not count.
    await page.waitForSelector('#search-note:has-text("order-42")');
    expect(await pageIds()).to.deep.equal([keyed]);
    await page.waitForSelector(`#task-detail code:has-text("${keyed}")`);
    await page.fill('#task-filters input[name=q]', paged[2]);
    await page.click('#task-filters button[type=submit]');
    // "1 task with this id" alone also matches the earlier note ("1 task with this idempotency key").
    await page.waitForSelector(`#search-note:has-text("${paged[2]}"):has-text("1 task with this id,")`);
    expect(await pageIds()).to.deep.equal([paged[2]]);
    await page.waitForSelector(`#task-detail code:has-text("${paged[2]}")`);
    await shot('views-task-search');
  });

  it('workflow page: cancel, confirmed first (dismissing does nothing), the outcome shown', async () => {
    const w = (
      await call('POST', '/api/v1/workflows', {
        workflow_name: 'nightly-import',
        tasks: [
          { task_id: 'extract', task_type: 'noop', scheduled_at: '2030-01-01T00:00:00Z' },
          { task_id: 'load', task_type: 'noop', dependencies: ['extract'] },
        ],
      })
    ).body;
    await show(`workflows?id=${w.workflow_id}`);
    await page.waitForSelector('#cancel-workflow:not([disabled])');
    acceptDialogs = false;
    await page.click('#cancel-workflow');
    expect(dialogs).to.deep.equal(['Cancel workflow nightly-import? Its waiting tasks are cancelled and its running ones aborted.']);
    expect((await call('GET', `/api/v1/workflows/${w.workflow_id}`)).body.status).to.equal('RUNNING');
    acceptDialogs = true;
    await page.click('#cancel-workflow');
    await page.waitForSelector('#flash:has-text("Cancel workflow nightly-import: CANCELLED")');
    expect((await call('GET', `/api/v1/workflows/${w.workflow_id}`)).body.status).to.equal('CANCELLED');
    await page.waitForSelector('#workflow-detail .s-CANCELLED');
    await page.waitForSelector('#cancel-workflow[disabled]');
    await page.waitForSelector(`#workflow-list tr[data-workflow-id="${w.workflow_id}"] .s-CANCELLED`);
    expect(await page.getAttribute('svg.dag g.dag-node[data-id="extract"]', 'data-status')).to.equal('CANCELLED');
    await shot('views-workflow-cancel');
  });

  it("a DEAD task's page: replay and delete, each confirmed; attempts counted per replay cycle", async () => {
    // 2 attempts per budget; fails its first 4 attempts: DEAD, replayed, DEAD, replayed, SUCCEEDED.
    const id = await submit({ task_type: 'fail', max_retries: 1, retry_delay_seconds: 0, payload: { times: 4 } });
    await waitTask(id, (t) => t.status === 'DEAD');
    await show(`tasks?id=${id}`);
    expect(await page.textContent('#task-attempts')).to.equal('attempt 2 of 2');
    await page.click('#replay-task');
    await page.waitForSelector(`#flash:has-text("Replay ${id}: PENDING")`);
    expect(dialogs[0]).to.equal(`Replay ${id}? It runs again at once with a fresh budget of 2 attempt(s).`);
    await waitTask(id, (t) => t.status === 'DEAD' && t.attempts === 4);
    await show(`tasks?id=${id}`);
    expect(await page.textContent('#task-attempts')).to.equal('attempt 2 of 2 in cycle 2 (1 replay; 4 attempts in all)');
    await page.click('#replay-task');
    await page.waitForSelector(`#flash:has-text("Replay ${id}: PENDING")`);
    const t = await waitTask(id, (x) => x.status === 'SUCCEEDED');
    expect(t.retry_base).to.equal(4);
    await show(`tasks?id=${id}`);
    expect(await page.textContent('#task-attempts')).to.equal('attempt 1 of 2 in cycle 3 (2 replays; 5 attempts in all)');
    expect(await texts('#task-detail tr[data-attempt] td:nth-child(2)')).to.deep.equal(['1', '1', '2', '2', '3']);
    expect(await page.textContent(`#task-list tr[data-task-id="${id}"] td:nth-child(6)`)).to.equal('1 of 2 (+4 before)');
    await shot('views-task-replay-cycles');

    const doomed = await submit({ task_type: 'fail', max_retries: 0, payload: { message: 'no such customer' } });
    await waitTask(doomed, (x) => x.status === 'DEAD');
    await show(`tasks?id=${doomed}`);
    await page.waitForSelector('#delete-task');
    await shot('views-task-dead-actions');
    acceptDialogs = false;
    await page.click('#delete-task');
    expect(dialogs.at(-1)).to.equal(`Delete ${doomed} with its attempt history and logs? This cannot be undone.`);
    expect((await call('GET', `/api/v1/tasks/${doomed}`)).status).to.equal(200);
    acceptDialogs = true;
    await page.click('#delete-task');
    await page.waitForSelector(`#flash:has-text("Delete ${doomed}: deleted")`);
    await page.waitForSelector('#task-deleted');
    expect((await call('GET', `/api/v1/tasks/${doomed}`)).status).to.equal(404);
    await page.waitForSelector(`#task-list tr[data-task-id="${doomed}"]`, { state: 'detached' });
  });

  it('a running task shows its progress (list and page, read again live) and each attempt its own logs', async () => {
    const id = await submit({ task_type: 'progress', payload: { release } });
    await waitTask(id, (t) => t.status === 'RUNNING' && t.progress !== null);
    await show(`tasks?status=RUNNING&id=${id}`);
    expect(await page.textContent(`#task-list tr[data-task-id="${id}"] .progress-cell`)).to.equal(' 3 of 10 · copying rows');
    expect(await page.textContent('#task-progress')).to.match(
      /^ 3 of 10 · copying rows \(attempt 1, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/,
    );
    expect(await page.$eval('#task-progress progress', (p) => (p as unknown as { value: number }).value)).to.be.closeTo(0.3, 1e-9);
    await page.waitForSelector('#attempt-logs:has-text("copied 3 rows")');
    await shot('views-task-progress');
    // The page reads the running task again: its end shows without a reload.
    fs.writeFileSync(release, '');
    await page.waitForSelector('#task-detail dd .s-SUCCEEDED', { timeout: 15_000 });

    const flaky = await submit({ task_type: 'flaky', max_retries: 1, retry_delay_seconds: 0 });
    await waitTask(flaky, (t) => t.status === 'SUCCEEDED');
    await show(`tasks?id=${flaky}`);
    await page.waitForSelector('#attempt-logs[data-attempt="2"]');
    expect(await page.textContent('#attempt-logs')).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}second try \{"rows":12\}$/);
    await page.selectOption('#logs-attempt', '1');
    await page.waitForSelector('#attempt-logs[data-attempt="1"]');
    const first = (await page.textContent('#attempt-logs'))!;
    expect(first).to.contain('first try {"rows":0}');
    expect(first).not.to.contain('second try');
    expect(await page.textContent('#task-detail tr[data-attempt="1"]')).to.contain('E_UPSTREAM: upstream refused');
    await shot('views-task-logs');
  });

  it('overview plots rates over a 15 s window: bursty completions no longer read as 0 and the peak', async () => {
    await show('overview');
    // The plotting code itself, fed scrapes 3 s apart of a counter that grows by 30 every other scrape.
    // A string, so that the compiler leaves the browser's import() alone.
    const series: { raw: number[]; smooth: number[] } = await page.evaluate(`(async () => {
      const m = await import('/ui/js/metrics.js');
      const scrapes = [];
      const raw = [];
      const smooth = [];
      let last = null;
      for (let i = 0; i < 40; i++) {
        const completed = 30 * Math.floor((i + 1) / 2);
        last = m.accumulate(last, { completed, submitted: completed, lagSum: 0, lagCount: 0 });
        scrapes.push({ at: i * 3000, acc: last.acc });
        if (i > 0) raw.push(m.windowPoint(scrapes.slice(-2), 0).throughput);
        const p = m.windowPoint(scrapes, 15000);
        if (p && i >= 5) smooth.push(p.throughput);
      }
      return { raw, smooth };
    })()`);
    expect(Math.min(...series.raw)).to.equal(0);
    expect(Math.max(...series.raw)).to.equal(10);
    expect(Math.min(...series.smooth)).to.be.at.least(4);
    expect(Math.max(...series.smooth)).to.be.at.most(6);

    // The live page: tasks ended in bursts while the overview samples.
    const started = Date.now();
    while (Date.now() - started < 24_000) {
      await call('POST', '/api/v1/tasks/batch', { tasks: Array.from({ length: 20 }, () => ({ task_type: 'noop' })) });
      await new Promise((r) => setTimeout(r, 4_000));
    }
    await page.waitForSelector('svg[data-chart="throughput"] polyline');
    const values = await page.$eval('svg[data-chart="throughput"] polyline', (p) =>
      (p.getAttribute('points') ?? '').split(' ').map((xy: string) => Number(xy.split(',')[1])),
    );
    expect(values.length).to.be.greaterThan(4);
    expect(await page.textContent('#metrics-note')).to.contain('each rate is taken over the last 15 s');
    expect(await page.textContent('svg[data-chart="throughput"]')).to.match(/\d\d:\d\d:\d\d UTC/);
    await shot('views-overview-smoothed');
  });

  it('cron and workflow lists page through every definition (100 crons, 50 workflows a page), not only the first page', async () => {
    const before = (await call('GET', '/api/v1/cron-tasks?limit=1000')).body.cron_tasks.length;
    for (let i = before; i < 103; i++) {
      await call('POST', '/api/v1/cron-tasks', { name: `paged-${i}`, cron_expression: '0 0 1 1 *', task_type: 'noop' });
    }
    await show('crons');
    const cronRows = () => page.$$eval('#cron-list tbody tr', (rows) => rows.length);
    expect(await cronRows()).to.equal(100);
    await page.click('#cron-next-page');
    await page.waitForSelector('#cron-page-number:has-text("page 2")');
    expect(await cronRows()).to.equal(3);
    expect(await page.isDisabled('#cron-next-page')).to.equal(true);
    await page.click('#cron-prev-page');
    await page.waitForSelector('#cron-page-number:has-text("page 1")');
    expect(await cronRows()).to.equal(100);

    const wfBefore = (await call('GET', '/api/v1/workflows?limit=1000')).body.workflows.length;
    for (let i = wfBefore; i < 52; i++) {
      await call('POST', '/api/v1/workflows', { workflow_name: `paged-${i}`, tasks: [{ task_id: 'a', task_type: 'noop' }] });
    }
    await show('workflows');
    const wfRows = () => page.$$eval('#workflow-list tbody tr', (rows) => rows.length);
    expect(await wfRows()).to.equal(50);
    await page.click('#workflow-next-page');
    await page.waitForSelector('#workflow-page-number:has-text("page 2")');
    expect(await wfRows()).to.equal(2);
    await shot('views-workflow-pages');
  });
});
