import { expect } from 'chai';
import { logText } from '../../src/cli/commands/logs';

/** `scheduler logs`: an attempt's lines for people (`--json` prints the API's answer as it is). */
describe('CLI logs view', () => {
  it('numbers and times each line, shows fields as JSON, marks cut lines and dropped ones', () => {
    const text = logText({
      attempt: 2,
      dropped_lines: 3,
      lines: [
        { n: 4, at: '2026-06-01T12:00:00.000Z', message: 'loading', fields: { rows: 3 }, truncated: false },
        { n: 5, at: '2026-06-01T12:00:01.000Z', message: 'long', fields: null, truncated: true },
      ],
    });
    expect(text).to.equal(
      [
        '(3 earlier lines of attempt 2 were dropped)',
        '   4  2026-06-01T12:00:00.000Z  loading {"rows":3}',
        '   5  2026-06-01T12:00:01.000Z  long (truncated)',
        '',
      ].join('\n'),
    );
    expect(logText({ attempt: 1, dropped_lines: 0, lines: [] })).to.equal('(attempt 1 kept no log lines)\n');
  });
});
