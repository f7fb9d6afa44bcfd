import { expect } from 'chai';
import { taskView } from '../../src/cli/task-view';

/** `scheduler get` for people: progress and checkpoint as one line each. */
describe('CLI task view', () => {
  it('shows progress as a percentage with done/total and message, and the checkpoint with its value', () => {
    const view = taskView({
      task_id: 't1',
      status: 'RUNNING',
      progress: { done: 6000, total: 10000, message: 'copying' },
      progress_attempt: 1,
      progress_at: '2026-01-01T00:00:01.000Z',
      checkpoint: { attempt: 1, saved_at: '2026-01-01T00:00:00.000Z', size_bytes: 13, value: { next: 6000 } },
    });
    expect(view).to.deep.equal({
      task_id: 't1',
      status: 'RUNNING',
      progress: '60 % (6000 of 10000 · copying), attempt 1 at 2026-01-01T00:00:01.000Z',
      checkpoint: 'attempt 1, 13 bytes, saved at 2026-01-01T00:00:00.000Z: {"next":6000}',
    });
    expect(taskView({ progress: 0.25, progress_attempt: 2, progress_at: 'T', checkpoint: null })).to.deep.equal({
      progress: '25 %, attempt 2 at T',
      checkpoint: null,
    });
    expect(taskView({ progress: { message: 'warming up' }, progress_attempt: 1, progress_at: 'T' }).progress).to.equal(
      '(warming up), attempt 1 at T',
    );
    expect(taskView({ progress: null, checkpoint: null })).to.deep.equal({ progress: null, checkpoint: null });
  });
});
