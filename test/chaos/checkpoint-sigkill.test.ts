import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { until } from '../helpers/cluster-processes';
import { http, waitForTask } from '../helpers/http';
import { countLines, isAlive } from '../helpers/process-files';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

/**
 * Checkpoints (the specification's third defence: "save progress every N records; on retry,
 * resume from the last checkpoint"). A handler registered through a config file processes 10,000
 * records, writing each record's id to a side-effect log and checkpointing every 500. Its worker
 * process is SIGKILLed once the log has about 6,100 lines: the next attempt starts from the last
 * checkpoint (≥ 5,500), at most 500 records are processed twice, and the task ends SUCCEEDED.
 */

const RECORDS = 10_000;
const EVERY = 500;
const KILL_AT = 6_100;

/** The handler: resumes at `ctx.lastCheckpoint.next`, one log line `<record> <attempt> <pid>` per record. */
function handlerSource(logPath: string): string {
  return `'use strict';
const fs = require('node:fs');
const LOG = ${JSON.stringify(logPath)};
module.exports = async (payload, ctx) => {
  const { records, every } = payload;
  let next = ctx.lastCheckpoint ? ctx.lastCheckpoint.next : 0;
  while (next < records) {
    fs.appendFileSync(LOG, next + ' ' + ctx.attempt + ' ' + process.pid + '\\n');
    next++;
    if (next % every === 0) {
      await ctx.checkpoint({ next });
      ctx.progress({ done: next, total: records });
    }
    // a little real work per record, so the attempt is in flight long enough to be killed
    if (next % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return { processed: records };
};
`;
}

interface Line {
  record: number;
  attempt: number;
  pid: number;
}

function readLog(file: string): Line[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [record, attempt, pid] = l.split(' ').map(Number);
      return { record, attempt, pid };
    });
}

describe('chaos: SIGKILL of a worker in the middle of a checkpointed task', function () {
  this.timeout(120_000);
  const dir = tempDir('scheduler-checkpoint-');
  const logPath = path.join(dir.path, 'records.log');
  let svc: ServiceProcess | null = null;

  before(async () => {
    const handlerPath = path.join(dir.path, 'process-records.js');
    fs.writeFileSync(handlerPath, handlerSource(logPath));
    // one worker process, pinged every 200 ms: its respawn is noticed (and the attempt retried) quickly
    svc = await startServiceProcess(
      dir.path,
      serviceConfigEnv(dir.path, { handlers: { process_records: handlerPath }, workers: 1, workerPingMs: 200 }),
    );
  });

  after(async () => {
    await svc?.stop();
    dir.remove();
  });

  it('the next attempt resumes from the last checkpoint (>= 5,500): at most 500 records twice, SUCCEEDED', async () => {
    const url = (svc as ServiceProcess).url;
    const res = await http('POST', `${url}/api/v1/tasks`, {
      task_type: 'process_records',
      payload: { records: RECORDS, every: EVERY },
      max_retries: 3,
      retry_backoff: 'fixed',
      retry_delay_seconds: 0,
      timeout_seconds: 120,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const id = res.body.task_id as string;

    // Wait for the side-effect log to reach about 6,100 records (past the checkpoint at 6,000), then SIGKILL the worker running them.
    await until(`${KILL_AT} records in the log`, async () => (countLines(logPath) >= KILL_AT ? true : undefined), 60_000, 2);
    const victim = readLog(logPath).at(-1)?.pid as number;
    process.kill(victim, 'SIGKILL');
    // what the API shows of the interrupted attempt (its retry saves no checkpoint for 500 records)
    const mid = (await http('GET', `${url}/api/v1/tasks/${id}`)).body;
    await until('the killed worker to be gone', async () => (isAlive(victim) ? undefined : true), 5_000, 5);
    const processedByFirst = countLines(logPath);

    const done = await waitForTask(
      url,
      id,
      (t) => ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'].includes(t.status),
      90_000,
      '?include=attempts',
    );
    expect(done.status, JSON.stringify(done)).to.equal('SUCCEEDED');
    expect(done.attempts).to.equal(2);
    expect(done.attempt_history[0].error.type).to.equal('worker_lost');

    const lines = readLog(logPath);
    const first = lines.filter((l) => l.attempt === 1);
    const second = lines.filter((l) => l.attempt === 2);
    expect(first.length).to.equal(processedByFirst);
    expect(first.map((l) => l.record)).to.deep.equal(Array.from({ length: first.length }, (_, i) => i));
    const resumedAt = second[0].record;
    expect(second.map((l) => l.record)).to.deep.equal(Array.from({ length: RECORDS - resumedAt }, (_, i) => resumedAt + i));
    expect(second[0].pid).to.not.equal(victim);
    const twice = processedByFirst - resumedAt;
    console.log(
      `    [checkpoint] killed after ${processedByFirst} records; the next attempt resumed at ${resumedAt}: ${twice} records processed twice`,
    );
    expect(processedByFirst, 'killed at about 6,000').to.be.at.least(KILL_AT).and.below(7_000);
    expect(resumedAt % EVERY).to.equal(0);
    expect(resumedAt).to.be.at.least(5_500);
    expect(twice).to.be.within(0, EVERY);
    // every record processed at least once
    expect(new Set(lines.map((l) => l.record)).size).to.equal(RECORDS);

    // The API showed the checkpoint and progress while it ran, and shows the last ones now.
    expect(mid.checkpoint).to.include({ attempt: 1 });
    expect(mid.checkpoint.value.next).to.equal(resumedAt);
    // progress is sent at most once a second: the last value stored is at or before the checkpoint
    expect(mid.progress_attempt).to.equal(1);
    expect(mid.progress.done).to.be.at.most(resumedAt);
    expect(done.checkpoint).to.deep.include({ attempt: 2, value: { next: RECORDS } });
    expect(done.progress).to.deep.equal({ done: RECORDS, total: RECORDS });
    expect(done.progress_attempt).to.equal(2);
  });
});
