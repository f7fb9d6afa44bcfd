import { expect } from 'chai';
import {
  describeError,
  errorDetail,
  MAX_CAUSE_DEPTH,
  MAX_MESSAGE_CHARS,
  MAX_STACK_CHARS,
  MAX_STACK_LINES,
} from '../../src/domain/attempt-error';
import { workerLostMessage } from '../../src/domain/lost-attempt';
import { taskErrorJson } from '../../src/contract/error-json';
import { attemptCompletion } from '../../src/domain/attempt-completion';

/** What an attempt keeps of a handler's throw (domain/attempt-error.ts). */
describe('describeError', () => {
  it('keeps message, name as type, code and a bounded stack of an Error', () => {
    const err = Object.assign(new RangeError('out of range'), { code: 'ERR_OUT_OF_RANGE' });
    const d = describeError(err);
    expect(d).to.include({ message: 'out of range', type: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    expect(d.stack).to.match(/^RangeError: out of range\n\s+at /);
    expect(d).to.not.have.property('cause');
  });

  it("keeps the cause chain with each cause's message, type and code (fetch's network failure)", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9999'), { code: 'ECONNREFUSED', errno: -111 });
    const d = describeError(new TypeError('fetch failed', { cause: refused }));
    expect(d).to.include({ message: 'fetch failed', type: 'TypeError' });
    expect(d.cause).to.deep.equal({ message: 'connect ECONNREFUSED 127.0.0.1:9999', type: 'Error', code: 'ECONNREFUSED' });
  });

  it('an AggregateError with an empty message takes its errors’ messages (every address refused)', () => {
    const agg = Object.assign(
      new AggregateError([new Error('connect ECONNREFUSED ::1:9'), new Error('connect ECONNREFUSED 127.0.0.1:9')], ''),
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(describeError(new TypeError('fetch failed', { cause: agg })).cause).to.deep.equal({
      message: 'connect ECONNREFUSED ::1:9; connect ECONNREFUSED 127.0.0.1:9',
      type: 'AggregateError',
      code: 'ECONNREFUSED',
    });
  });

  it(`stops a long chain after ${MAX_CAUSE_DEPTH} causes, marked 'depth'`, () => {
    let err: Error = new Error('root');
    for (let i = 9; i >= 0; i--) err = new Error(`level ${i}`, { cause: err });
    const d = describeError(err);
    let depth = 0;
    let node = d.cause;
    let last = node;
    while (node) {
      depth++;
      last = node;
      node = node.cause;
    }
    expect(depth).to.equal(MAX_CAUSE_DEPTH);
    expect(last).to.include({ message: `level ${MAX_CAUSE_DEPTH}`, causeOmitted: 'depth' });
  });

  it("ends a circular chain where it comes back, marked 'circular'", () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as Error & { cause?: unknown }).cause = b;
    const d = describeError(a);
    expect(d.cause).to.deep.equal({ message: 'b', type: 'Error', causeOmitted: 'circular' });
    const self = new Error('self');
    (self as Error & { cause?: unknown }).cause = self;
    expect(describeError(self)).to.include({ causeOmitted: 'circular' }).and.not.have.property('cause');
  });

  it(`cuts a huge stack to ${MAX_STACK_LINES} lines and ${MAX_STACK_CHARS} characters, and a huge message`, () => {
    const err = new Error('x'.repeat(MAX_MESSAGE_CHARS + 100));
    err.stack = ['Error: deep', ...Array.from({ length: 500 }, (_, i) => `    at frame${i} (file.js:${i}:1)`)].join('\n');
    const d = describeError(err);
    const lines = (d.stack as string).split('\n');
    expect(lines).to.have.length(MAX_STACK_LINES + 1);
    expect(lines[MAX_STACK_LINES]).to.match(/… 471 more lines/);
    expect(d.message)
      .to.have.length.below(MAX_MESSAGE_CHARS + 40)
      .and.match(/… \(100 more characters\)$/);
    err.stack = `Error: wide\n    at ${'y'.repeat(10_000)}`;
    expect(describeError(err).stack)
      .to.have.length.below(MAX_STACK_CHARS + 40)
      .and.match(/cut at 4096 characters/);
  });

  it('a thrown non-Error: strings and values become the message (type Error), objects keep their fields', () => {
    expect(describeError('plain text')).to.deep.equal({ message: 'plain text', type: 'Error' });
    expect(describeError(42)).to.deep.equal({ message: '42', type: 'Error' });
    expect(describeError(undefined)).to.deep.equal({ message: 'undefined', type: 'Error' });
    expect(describeError(null)).to.deep.equal({ message: 'null', type: 'Error' });
    expect(describeError({ message: 'shaped', code: 7, name: 'Custom' })).to.deep.equal({ message: 'shaped', type: 'Custom', code: '7' });
    expect(describeError({ reason: 'no message' })).to.deep.equal({ message: '{"reason":"no message"}', type: 'Error' });
    expect(describeError(new Error('with a string cause', { cause: 'because' })).cause).to.deep.equal({
      message: 'because',
      type: 'string',
    });
  });

  it('never throws, even for a value whose getters throw', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no reading');
        },
      },
    );
    expect(describeError(hostile)).to.deep.equal({ message: '[a value that cannot be read]', type: 'Error' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeError(describeError).type).to.equal('Error');
    expect(() => describeError([cyclic])).to.not.throw();
  });

  it('keeps an HTTP status from `status`', () => {
    expect(describeError(Object.assign(new Error('HTTP 503'), { status: 503 }))).to.include({ httpStatus: 503 });
    expect(describeError(Object.assign(new Error('x'), { status: 'bad' }))).to.not.have.property('httpStatus');
  });

  it('survives JSON (it crosses a process and is stored) and shows in snake_case through the API', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const d = describeError(Object.assign(new Error('outer', { cause: new Error('mid', { cause: refused }) }), { status: 502 }));
    const stored = JSON.parse(JSON.stringify({ message: d.message, type: d.type, retryable: true, ...errorDetail(d) }));
    const json = taskErrorJson(stored);
    expect(json).to.include({ message: 'outer', type: 'Error', retryable: true, http_status: 502 });
    expect(json?.cause?.cause).to.deep.equal({ message: 'connect ECONNREFUSED', type: 'Error', code: 'ECONNREFUSED' });
    expect(json?.stack).to.be.a('string');
    expect(taskErrorJson({ message: 'm', type: 't', retryable: false })).to.deep.equal({ message: 'm', type: 't', retryable: false });
    expect(taskErrorJson(null)).to.equal(null);
  });
});

describe('a lost worker process', () => {
  it('names its exit code or signal', () => {
    expect(workerLostMessage({ code: 3, signal: null })).to.equal('worker process exited with code 3');
    expect(workerLostMessage({ code: null, signal: 'SIGKILL' })).to.equal('worker process was killed by SIGKILL');
    expect(workerLostMessage(null)).to.equal('worker process was lost');
  });

  it("the completion's error keeps exit_code and signal beside message and type", () => {
    const c = attemptCompletion(
      't',
      1,
      {
        kind: 'failed',
        message: 'worker process exited with code 3',
        errorType: 'worker_lost',
        permanent: false,
        detail: { exitCode: 3, signal: null },
      },
      { maxRetries: 0, backoff: 'fixed', delaySeconds: 1 },
      0,
      null,
    );
    expect(c.state).to.equal('DEAD');
    expect(taskErrorJson(c.error)).to.deep.equal({
      message: 'worker process exited with code 3',
      type: 'worker_lost',
      retryable: true,
      exit_code: 3,
      signal: null,
    });
  });
  it('never throws, even for a thrown Proxy whose every trap throws: the attempt still ends with what can be said', () => {
    const trap = () => {
      throw new Error('proto trap');
    };
    const hostile = new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
    const d = describeError(hostile);
    expect(d).to.deep.equal({ message: 'the thrown value could not be described (reading it threw: proto trap)', type: 'Error' });
    // A trap that throws a value whose own reads throw too.
    const worse = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw hostile;
        },
        get: trap,
      },
    );
    expect(describeError(worse).message).to.equal('the thrown value could not be described (reading it threw)');
  });
});
