import { expect } from 'chai';
import { details, table } from '../../src/cli/output';

describe('CLI output: stored strings cannot act on the terminal', () => {
  it('a name with an escape sequence, a newline, a tab or a bidi override is shown as an escaped JSON string', () => {
    const rows = [
      { name: 'evil\u001b[31mRED\nsecond line\ttab', schedule: '@yearly' },
      { name: 'plain name', schedule: '* * * * *' },
      { name: 'abc\u202edcba', schedule: 'x\u009by' },
    ];
    const out = table(rows, [
      ['NAME', 'name'],
      ['SCHEDULE', 'schedule'],
    ]);
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(out).to.not.match(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    const lines = out.split('\n');
    expect(lines).to.have.length(5); // header, three rows, the final newline
    expect(lines[1]).to.include('"evil\\u001b[31mRED\\nsecond line\\ttab"');
    expect(lines[2]).to.match(/^plain name\s+\* \* \* \* \*$/);
    expect(lines[3]).to.include('"abc\\u202edcba"').and.include('"x\\u009by"');
  });

  it('details() escapes the same way, in nested values too', () => {
    const out = details({ name: 'a\u001b]0;title\u0007', metadata: { note: 'x\u0085y' } });
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(out).to.not.match(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(out).to.include('"a\\u001b]0;title\\u0007"');
    expect(out).to.include('{"note":"x\\u0085y"}');
  });
});
