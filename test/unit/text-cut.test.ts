import { expect } from 'chai';
import { boundedMessage, MAX_MESSAGE_CHARS } from '../../src/domain/attempt-error';
import { logLine, MAX_LINE_CHARS } from '../../src/domain/attempt-log';
import { cutText } from '../../src/domain/text-cut';

/** A lone high surrogate anywhere in `text`. */
const loneSurrogate = (text: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe('cutting text without splitting a surrogate pair', () => {
  it('cutText keeps at most max code units, one fewer where the cut would split an astral character', () => {
    expect(cutText('abc', 5)).to.equal('abc');
    expect(cutText('abcdef', 3)).to.equal('abc');
    expect(cutText('a😀b', 2)).to.equal('a'); // 😀 is two code units: not cut in half
    expect(cutText('a😀b', 3)).to.equal('a😀');
  });

  it('an error message and a log line cut at their bounds end on whole characters (a lone surrogate was stored)', () => {
    const message = boundedMessage(`a${'😀'.repeat(MAX_MESSAGE_CHARS)}`);
    expect(loneSurrogate(message), 'message').to.equal(false);
    expect(message).to.match(/… \(\d+ more characters\)$/);
    const line = logLine(1, 0, `a${'😀'.repeat(MAX_LINE_CHARS)}`);
    expect(loneSurrogate(line.message), 'log line').to.equal(false);
    expect(line.truncated).to.equal(true);
  });

  it('a NUL in a log message is kept as U+FFFD (PostgreSQL text cannot hold it: the flush was refused)', () => {
    expect(logLine(1, 0, 'a\u0000b', { k: 'x\u0000' })).to.deep.include({ message: 'a\ufffdb', fields: '{"k":"x\\u0000"}' });
  });
});
