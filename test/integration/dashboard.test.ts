import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, dashboardDriver, launchChromium, requireChromium } from '../helpers/chromium';
import { hashApiKey } from '../../src/tenancy/api-keys';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const ADMIN_KEY = 'dashboard-admin-key-1';

/**
 * The dashboard end to end (issue 9): a real service process with an admin API key, driven by
 * headless Chromium through playwright-core. Every check on an action reads the outcome back
 * through the REST API. Without Chromium the suite fails, except outside CI (`CI` unset), where
 * it is skipped with a message.
 */
describe('dashboard in a browser (real service, headless Chromium)', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let svc: ServiceProcess;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  const { call, waitTask, show, shot } = dashboardDriver(
    () => svc.url,
    () => page,
    ADMIN_KEY,
  );

  before(async function () {
    requireChromium(this);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    // A handler that writes ctx.log lines, for the task page's logs.
    const logger = path.join(dir.path, 'logger.js');
    fs.writeFileSync(
      logger,
      "module.exports = async (payload, ctx) => { ctx.log('loading rows', { rows: 3 }); ctx.log('rows loaded'); return 'ok'; };\n",
    );
    const env = serviceConfigEnv(dir.path, { apiKeys: [{ sha256: hashApiKey(ADMIN_KEY), admin: true }], handlers: { logger } });
    svc = await startServiceProcess(dir.path, env);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // The key-less first load answers 401 by design; anything else (a CSP refusal, a script error) is a bug.
      if (m.type() === 'error' && !/status of 401/.test(m.text())) pageErrors.push(`console: ${m.text()}`);
    });
    page.on('dialog', (d) => void d.accept());
  });

  after(async () => {
    await browser?.close();
    await svc?.stop();
    dir.remove();
  });

  afterEach(() => {
    expect(pageErrors, 'errors in the page').to.deep.equal([]);
  });

  it('without a key the page loads and asks for one; with the admin key it shows the overview with depths and plots', async () => {
    await call('POST', '/api/v1/tasks', { task_type: 'echo', payload: { hello: 1 } });
    await page.goto(`${svc.url}/ui`);
    await page.waitForSelector('body[data-ready="overview"]');
    await page.waitForSelector('#metrics-note:has-text("Metrics unavailable")');
    await page.fill('#api-key', ADMIN_KEY);
    await page.click('#key-save');
    expect(await page.textContent('#key-state')).to.equal('key set for this tab');
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('scheduler.apiKey'))).to.equal(ADMIN_KEY);
    await page.waitForSelector('.card[data-state="SUCCEEDED"]');
    // Two scrapes (3 s apart) make the first point of each plot.
    await page.waitForSelector('svg[data-chart="throughput"] :is(polyline, circle)', { timeout: 15_000 });
    expect(await page.textContent('.card[data-state="SUCCEEDED"] .n')).to.equal('1');
    await shot('overview');
  });

  it('tasks: finds a scheduled task by status and cancels it', async () => {
    const id = (await call('POST', '/api/v1/tasks', { task_type: 'echo', scheduled_at: '2030-01-01T00:00:00Z', payload: { to: 'ada' } }))
      .body.task_id;
    await show('tasks');
    await page.selectOption('#task-filters select[name=status]', 'SCHEDULED');
    await page.click('#task-filters button[type=submit]');
    await page.waitForSelector(`#task-list tr[data-task-id="${id}"]`);
    await page.click(`#task-list tr[data-task-id="${id}"]`);
    await page.waitForSelector('#task-detail pre:has-text("ada")');
    await page.click('#cancel-task');
    await page.waitForSelector('#flash:has-text("Cancel: CANCELLED")');
    expect((await call('GET', `/api/v1/tasks/${id}`)).body.status).to.equal('CANCELLED');
    await page.waitForSelector('#task-detail .s-CANCELLED');
    await shot('tasks');
  });

  it("tasks: the task page shows an attempt's ctx.log lines", async () => {
    const id = (await call('POST', '/api/v1/tasks', { task_type: 'logger' })).body.task_id;
    await waitTask(id, (t) => t.status === 'SUCCEEDED');
    await show(`tasks?id=${id}`);
    await page.waitForSelector('#attempt-logs:has-text("rows loaded")');
    expect(await page.textContent('#attempt-logs')).to.contain('loading rows {"rows":3}');
    expect(await page.inputValue('#logs-attempt')).to.equal('1');
  });

  it('tasks: reschedules a scheduled task (PATCH scheduled_at)', async () => {
    const id = (await call('POST', '/api/v1/tasks', { task_type: 'noop', scheduled_at: '2030-01-01T00:00:00Z' })).body.task_id;
    await show(`tasks?id=${id}`);
    await page.waitForSelector('#reschedule-task:not([disabled])');
    await page.fill('#reschedule-at', '2031-06-01T12:00:00');
    await page.click('#reschedule-task');
    await page.waitForSelector('#flash:has-text("Reschedule")');
    const t = (await call('GET', `/api/v1/tasks/${id}`)).body;
    expect(t.status).to.equal('SCHEDULED');
    expect(t.scheduled_at.startsWith('2031-06-01')).to.equal(true);
  });

  it('dead-letter queue: a DEAD task is listed with its error and replayed from the page', async () => {
    // Fails its first attempt (no retries: DEAD), succeeds when replayed.
    const id = (await call('POST', '/api/v1/tasks', { task_type: 'fail', max_retries: 0, payload: { permanent: false, times: 1 } })).body
      .task_id;
    await waitTask(id, (t) => t.status === 'DEAD');
    await show('dead-letter');
    const row = `#dlq-list tr[data-task-id="${id}"]`;
    await page.waitForSelector(`${row}:has-text("failed on purpose")`);
    await page.click(row);
    await page.waitForSelector('#task-detail h3:has-text("Attempts")');
    await shot('dead-letter');
    await page.click(`${row} button.replay`);
    await page.waitForSelector(`#flash:has-text("Replay ${id}: PENDING")`);
    const t = await waitTask(id, (x) => x.status === 'SUCCEEDED');
    expect(t.attempt_history.map((a: any) => a.outcome)).to.deep.equal(['DEAD', 'SUCCEEDED']);
    await page.waitForSelector(row, { state: 'detached' });
  });

  it('dead-letter queue: bulk replay of the selected entries', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      ids.push(
        (await call('POST', '/api/v1/tasks', { task_type: 'fail', max_retries: 0, payload: { permanent: false, times: 1 } })).body.task_id,
      );
    }
    for (const id of ids) await waitTask(id, (t) => t.status === 'DEAD');
    await show('dead-letter');
    for (const id of ids) await page.check(`#dlq-list tr[data-task-id="${id}"] input[type=checkbox]`);
    await page.click('#replay-selected');
    await page.waitForSelector('#flash:has-text("Replayed 2 of 2")');
    for (const id of ids) await waitTask(id, (t) => t.status === 'SUCCEEDED');
  });

  it('crons: lists a cron with its next fire time, pauses it and shows its detail', async () => {
    const c = (
      await call('POST', '/api/v1/cron-tasks', { name: 'nightly', cron_expression: '30 2 * * *', timezone: 'UTC', task_type: 'noop' })
    ).body;
    await show('crons');
    const row = `#cron-list tr[data-cron-id="${c.cron_id}"]`;
    await page.waitForSelector(`${row} time`);
    await page.click(`${row} button.cron-toggle`);
    await page.waitForSelector('#flash:has-text("nightly: paused")');
    expect((await call('GET', `/api/v1/cron-tasks/${c.cron_id}`)).body.enabled).to.equal(false);
    await page.waitForSelector('#cron-detail #cron-toggle:has-text("Resume")');
    await page.click('#cron-detail #cron-toggle');
    await page.waitForSelector('#flash:has-text("nightly: resumed")');
    expect((await call('GET', `/api/v1/cron-tasks/${c.cron_id}`)).body.enabled).to.equal(true);
    await page.waitForSelector('#cron-detail li time');
    await shot('crons');
  });

  it("workflows: draws a workflow's tasks as a DAG with their states", async () => {
    const w = (
      await call('POST', '/api/v1/workflows', {
        workflow_name: 'onboarding',
        tasks: [
          { task_id: 'create', task_type: 'echo', payload: { a: 1 } },
          { task_id: 'email', task_type: 'echo', dependencies: ['create'] },
          { task_id: 'later', task_type: 'noop', dependencies: ['create'], scheduled_at: '2030-01-01T00:00:00Z' },
          { task_id: 'notify', task_type: 'echo', dependencies: ['email', 'later'] },
        ],
      })
    ).body;
    await waitTask(w.task_ids.email, (t) => t.status === 'SUCCEEDED');
    await show('workflows');
    await page.click(`#workflow-list tr[data-workflow-id="${w.workflow_id}"]`);
    await page.waitForSelector('svg.dag g.dag-node[data-id="notify"]');
    const states = await page.$$eval('svg.dag g.dag-node', (gs) =>
      Object.fromEntries(gs.map((g) => [g.getAttribute('data-id'), g.getAttribute('data-status')])),
    );
    expect(states).to.deep.equal({ create: 'SUCCEEDED', email: 'SUCCEEDED', later: 'SCHEDULED', notify: 'BLOCKED' });
    expect(await page.$$eval('svg.dag path[marker-end]', (p) => p.length)).to.equal(4);
    await page.click('svg.dag g.dag-node[data-id="later"]');
    await page.waitForSelector(`#task-detail code:has-text("${w.task_ids.later}")`);
    await shot('workflows');
  });

  it('tenants and limits: saves a tenant weight, a task-type limit and a concurrency limit (admin PUT)', async () => {
    await show('tenants');
    // A weight alone keeps the tenant's limit (the form sent rate_limit null, lifting it); fractions are weights too.
    expect((await call('PUT', '/api/v1/tenants/acme', { rate_limit: { rate_per_second: 7 } })).status).to.equal(200);
    await page.fill('#tenant-form input[name=tenant]', 'acme');
    await page.fill('#tenant-form input[name=weight]', '2.5');
    await page.click('#tenant-form button[type=submit]');
    await page.waitForSelector('#flash:has-text("Tenant acme: saved")');
    expect((await call('GET', '/api/v1/tenants')).body.tenants).to.deep.include({
      tenant_id: 'acme',
      weight: 2.5,
      rate_limit: { rate_per_second: 7, burst: 1 },
    });
    await page.fill('#tenant-form input[name=tenant]', 'acme');
    await page.fill('#tenant-form input[name=weight]', '3');
    await page.check('#tenant-form input[name=no_limit]');
    // The first save's flash may still show: wait for this PUT's answer instead.
    const saved = page.waitForResponse((r) => r.url().endsWith('/api/v1/tenants/acme') && r.request().method() === 'PUT');
    await page.click('#tenant-form button[type=submit]');
    expect((await saved).status()).to.equal(200);
    await page.fill('#rate-limit-form input[name=task_type]', 'echo');
    await page.fill('#rate-limit-form input[name=rate]', '50');
    await page.fill('#rate-limit-form input[name=burst]', '5');
    await page.click('#rate-limit-form button[type=submit]');
    await page.waitForSelector('#flash:has-text("Rate limit echo: saved")');
    await page.waitForSelector('td:has-text("echo")');
    expect((await call('GET', '/api/v1/tenants')).body.tenants).to.deep.include({ tenant_id: 'acme', weight: 3, rate_limit: null });
    expect((await call('GET', '/api/v1/rate-limits')).body.rate_limits).to.deep.include({
      task_type: 'echo',
      rate_per_second: 50,
      burst: 5,
    });
    await page.fill('#concurrency-limit-form input[name=key]', 'host:api.example.com');
    await page.fill('#concurrency-limit-form input[name=max_running]', '3');
    await page.click('#concurrency-limit-form button[type=submit]');
    await page.waitForSelector('#flash:has-text("Concurrency limit host:api.example.com: saved")');
    await page.waitForSelector('td:has-text("host:api.example.com")');
    expect((await call('GET', '/api/v1/concurrency-limits')).body.concurrency_limits).to.deep.equal([
      { key: 'host:api.example.com', max_running: 3, running: 0 },
    ]);
    await shot('tenants');
  });
});

describe('dashboard in a browser without API keys', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let svc: ServiceProcess;
  let browser: Browser;

  before(async function () {
    requireChromium(this);
    svc = await startServiceProcess(dir.path);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
    dir.remove();
  });

  it('works with no key entered: the overview reads /metrics and the tasks page lists tasks', async () => {
    const res = await fetch(`${svc.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'echo', scheduled_at: '2030-01-01T00:00:00Z' }),
    });
    const id = ((await res.json()) as { task_id: string }).task_id;
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    await page.goto(`${svc.url}/ui`);
    await page.waitForSelector('#metrics-note:has-text("Sampled from /metrics")');
    expect(await page.textContent('.card[data-state="SCHEDULED"] .n')).to.equal('1');
    expect(await page.textContent('#key-state')).to.equal('no key');
    await page.click('#nav a[data-page="tasks"]');
    await page.waitForSelector(`#task-list tr[data-task-id="${id}"]`);
    expect(errors).to.deep.equal([]);
  });
});
