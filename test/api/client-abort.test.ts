import net from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import pino from 'pino';
import { toSchedulerError } from '../../src/api/error-handler';
import { httpStatusOf } from '../../src/contract/error-catalog';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/**
 * A client that closes its connection before the body it announced has arrived is its own fault:
 * logged at info, never as an error of the service (no 500, no stack), and the service serves on.
 */
describe('REST: a request aborted by the client', () => {
  let f: ApiFixture | undefined;
  const lines: Array<{ level: number; msg: string }> = [];
  let onLine: (() => void) | null = null;
  afterEach(async () => {
    await f?.close();
    f = undefined;
  });

  it("only the incoming request's abort is the client's fault: a reset outgoing connection stays a 500", () => {
    /** The mapped error's code with the HTTP status it is answered with. */
    const answer = (err: Error) => ({ status: httpStatusOf(toSchedulerError(err, 1024).code), code: toSchedulerError(err, 1024).code });
    const abort = Object.assign(new Error('aborted'), { code: 'ECONNRESET', statusCode: 400 });
    expect(answer(abort)).to.include({ status: 400, code: 'MALFORMED_REQUEST' });
    const outgoing = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(answer(outgoing)).to.include({ status: 500, code: 'INTERNAL_ERROR' });
  });

  it('is logged at info as aborted, not as a failed request', async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        onLine?.();
        done();
      },
    });
    const fixture = await apiFixture({}, pino({ level: 'info' }, stream));
    f = fixture;
    const address = await fixture.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const logged = new Promise<void>((resolve) => {
      onLine = () => lines.some((l) => /aborted|request failed/.test(l.msg)) && resolve();
    });
    const socket = net.connect(port, '127.0.0.1', () => {
      // 13 of the 100 bytes announced, then the connection closes.
      socket.write(
        'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"task_type":',
        () => socket.destroy(),
      );
    });
    await logged;
    expect(lines.filter((l) => l.level >= 50)).to.deep.equal([]);
    expect(lines.find((l) => /aborted/.test(l.msg))?.level).to.equal(30);
    const ok = await fetch(`${address}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"task_type":"noop"}',
    });
    expect(ok.status).to.equal(202);
    expect(fixture.stored).to.have.length(1);
  });
});
