import { expect } from 'chai';
import { logLine, MAX_LINE_CHARS, MAX_LOG_BYTES, MAX_LOG_LINES } from '../../src/domain/attempt-log';
import { numberPostedLines } from '../../src/domain/posted-log-lines';

const AT = Date.UTC(2026, 0, 1);
const posted = (n: number, message = 'x') => Array.from({ length: n }, () => ({ at: AT, message, fields: { level: 'info' } }));

/** Log lines an external worker posts: numbered after the kept ones, within the bounds of `ctx.log`. */
describe('numberPostedLines', () => {
  it('numbers from 1, then after the last kept line', () => {
    const first = numberPostedLines([], posted(2));
    expect(first.lines.map((l) => l.n)).to.deep.equal([1, 2]);
    expect(first.keepFrom).to.equal(1);
    expect(first.lines[0]).to.deep.equal({ n: 1, at: AT, message: 'x', fields: '{"level":"info"}', truncated: false });
    const next = numberPostedLines(first.lines, posted(1));
    expect(next.lines.map((l) => l.n)).to.deep.equal([3]);
  });

  it('keeps the last MAX_LOG_LINES lines: older ones are dropped, even of the same post', () => {
    const kept = numberPostedLines([], posted(150)).lines;
    const r = numberPostedLines(kept, posted(100));
    expect(r.keepFrom).to.equal(250 - MAX_LOG_LINES + 1);
    expect(r.lines.map((l) => l.n)).to.deep.equal(Array.from({ length: 100 }, (_, i) => 151 + i));
    const over = numberPostedLines([], posted(MAX_LOG_LINES + 5));
    expect(over.lines).to.have.length(MAX_LOG_LINES);
    expect(over.keepFrom).to.equal(6);
  });

  it('keeps at most MAX_LOG_BYTES of text, lines cut to MAX_LINE_CHARS', () => {
    const long = 'y'.repeat(MAX_LINE_CHARS + 10);
    const r = numberPostedLines([logLine(1, AT, 'old')], posted(20, long));
    expect(r.lines.every((l) => l.message.length === MAX_LINE_CHARS && l.truncated)).to.equal(true);
    const size = r.lines.reduce((s, l) => s + l.message.length + (l.fields?.length ?? 0), 0);
    expect(size).to.be.at.most(MAX_LOG_BYTES);
    expect(r.keepFrom).to.be.greaterThan(2);
    expect(r.lines[r.lines.length - 1].n).to.equal(21);
  });
});
