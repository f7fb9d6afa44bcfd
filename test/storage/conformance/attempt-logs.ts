/** Store conformance, attempt logs and detailed attempt errors (see ./index.ts). */
import { expect } from 'chai';
import { AttemptLogLine, AttemptLogWindow, MAX_LOG_LINES } from '../../../src/domain/attempt-log';
import { describeError } from '../../../src/domain/attempt-error';
import { completion, finishedTask, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

function line(n: number, message = `line ${n}`, fields: string | null = null): AttemptLogLine {
  return { n, at: T0 + n, message, fields, truncated: false };
}

export function describeAttemptLogs(ctx: ConformanceContext): void {
  describe('appendAttemptLogs, getAttemptLog; errors with detail', () => {
    it('keeps lines per attempt in order; a repeated append adds nothing', async () => {
      const s = ctx.store();
      await s.insertTasks([newTask('al-a')]);
      const attempt = await startTask(s, 'al-a', T0);
      expect(
        await s.appendAttemptLogs([{ taskId: 'al-a', attempt, lines: [line(1), line(2, 'two', '{"k":1}')], keepFrom: 1 }], T0),
      ).to.equal(2);
      expect(await s.appendAttemptLogs([{ taskId: 'al-a', attempt, lines: [line(2, 'again'), line(3)], keepFrom: 1 }], T0)).to.equal(1);
      const log = await s.getAttemptLog('al-a', attempt);
      expect(log).to.deep.equal({ taskId: 'al-a', attempt, droppedLines: 0, lines: [line(1), line(2, 'two', '{"k":1}'), line(3)] });
      expect(await s.getAttemptLog('al-a', attempt + 1)).to.deep.equal({
        taskId: 'al-a',
        attempt: attempt + 1,
        lines: [],
        droppedLines: 0,
      });
      expect(await s.getAttemptLog('al-none', 1)).to.deep.equal({ taskId: 'al-none', attempt: 1, lines: [], droppedLines: 0 });
    });

    it("drops an attempt's lines before keepFrom (the bounds) and counts them; other attempts keep theirs", async () => {
      const s = ctx.store();
      await s.insertTasks([newTask('al-b')]);
      const w = new AttemptLogWindow();
      for (let i = 0; i < MAX_LOG_LINES + 50; i++) w.add(T0 + i, `m${i + 1}`);
      const sent = w.takeNew();
      expect(sent.keepFrom).to.equal(51);
      await s.appendAttemptLogs([{ taskId: 'al-b', attempt: 1, lines: [line(1)], keepFrom: 1 }], T0);
      await s.appendAttemptLogs([{ taskId: 'al-b', attempt: 2, lines: [line(1), line(2), line(3)], keepFrom: 1 }], T0);
      await s.appendAttemptLogs([{ taskId: 'al-b', attempt: 2, ...sent }], T0);
      const log = await s.getAttemptLog('al-b', 2);
      expect(log.droppedLines).to.equal(50);
      expect(log.lines).to.have.length(MAX_LOG_LINES);
      expect(log.lines[0]).to.include({ n: 51, message: 'm51' });
      expect(log.lines[MAX_LOG_LINES - 1]).to.include({ n: MAX_LOG_LINES + 50 });
      expect((await s.getAttemptLog('al-b', 1)).lines).to.have.length(1);
    });

    it('retention and the dead-letter delete remove the logs with their task', async () => {
      const s = ctx.store();
      await finishedTask(s, 'al-old', 'SUCCEEDED', T0);
      await finishedTask(s, 'al-dead', 'DEAD', T0);
      await s.insertTasks([newTask('al-live')]);
      await startTask(s, 'al-live', T0);
      for (const id of ['al-old', 'al-dead', 'al-live'])
        await s.appendAttemptLogs([{ taskId: id, attempt: 1, lines: [line(1)], keepFrom: 1 }], T0);
      expect(await s.deleteDead('al-dead')).to.equal(true);
      expect((await s.getAttemptLog('al-dead', 1)).lines).to.deep.equal([]);
      expect((await s.purgeFinished(T0 + 1000, T0 + 1000, 10)).tasks).to.equal(1);
      expect((await s.getAttemptLog('al-old', 1)).lines).to.deep.equal([]);
      expect((await s.getAttemptLog('al-live', 1)).lines).to.have.length(1);
    });

    it("an attempt's error keeps its code, cause chain, stack, HTTP status and a lost process's exit", async () => {
      const s = ctx.store();
      await s.insertTasks([newTask('al-err'), newTask('al-lost')]);
      const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9999'), { code: 'ECONNREFUSED' });
      const d = describeError(Object.assign(new TypeError('fetch failed', { cause }), { status: 503 }));
      const { message, type, ...detail } = d;
      const error = { message, type, retryable: true, ...detail };
      const a1 = await startTask(s, 'al-err', T0);
      await s.completeAttempts([completion('al-err', a1, 'RETRYING', { retryAt: T0 + 100_000, error })], T0 + 1);
      expect((await s.getTask('al-err'))?.error).to.deep.equal(error);
      expect((await s.getAttempts('al-err'))[0].error).to.deep.equal(error);
      expect(error.cause).to.deep.include({ message: 'connect ECONNREFUSED 127.0.0.1:9999', code: 'ECONNREFUSED' });
      const lost = { message: 'worker process exited with code 3', type: 'worker_lost', retryable: true, exitCode: 3, signal: null };
      const a2 = await startTask(s, 'al-lost', T0);
      await s.completeAttempts([completion('al-lost', a2, 'DEAD', { error: lost })], T0 + 1);
      expect((await s.getTask('al-lost'))?.error).to.deep.equal(lost);
    });
  });
}
