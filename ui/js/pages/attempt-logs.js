import { api, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { utcText } from '../time.js';

/**
 * An attempt's `ctx.log` lines (GET /api/v1/tasks/{id}/attempts/{n}/logs) with a choice of
 * attempt, the latest first shown. Each line: time (UTC), message and its fields as JSON.
 * @param taskId the task's id
 * @param attempts how many attempts the task has started (nothing is shown for 0)
 * @returns `{nodes, reload}` (`reload()` reads the chosen attempt's lines again), or null for 0 attempts
 */
export function attemptLogs(taskId, attempts) {
  if (!attempts) return null;
  const out = h('pre', { id: 'attempt-logs', class: 'logs' }, 'loading…');
  const choice = h('select', { id: 'logs-attempt' },
    Array.from({ length: attempts }, (_, i) => attempts - i).map((n) => h('option', { value: String(n) }, `attempt ${n}`)));
  const load = async () => {
    const n = Number(choice.value);
    try {
      const log = await api('GET', `/api/v1/tasks/${seg(taskId)}/attempts/${n}/logs`);
      if (Number(choice.value) !== n) return;
      const lines = log.lines.map((l) => `${utcText(l.at)}  ${l.message}${l.fields === null ? '' : ` ${JSON.stringify(l.fields)}`}${l.truncated ? ' (truncated)' : ''}`);
      if (log.dropped_lines > 0) lines.unshift(`(${log.dropped_lines} earlier lines dropped)`);
      out.dataset.attempt = String(n);
      replace(out, lines.length > 0 ? lines.join('\n') : '(no lines logged)');
    } catch (err) {
      replace(out, err.message);
    }
  };
  choice.addEventListener('change', () => void load());
  void load();
  return { nodes: [h('h3', {}, 'Logs ', choice), out], reload: load };
}
