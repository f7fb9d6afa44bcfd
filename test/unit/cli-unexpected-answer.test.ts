import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli } from '../../src/cli/program';
import { sink } from '../helpers/sink';

/**
 * The CLI against an answer of a shape it does not expect (a proxy, another service on the port):
 * one line on stderr and exit 1, not a TypeError's stack; the stack with SCHEDULER_CLI_DEBUG=1.
 */
describe('CLI: an unexpected answer', () => {
  let server: http.Server;
  let url: string;
  /** What the server answers: an object of another shape, or `null`. */
  let answer = '{}';
  before(async () => {
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const run = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
    const out = sink();
    const err = sink();
    const code = await runCli([...args, '--url', url], { env, out, err });
    return { code, err: err.text() };
  };

  it('is one line and exit 1; SCHEDULER_CLI_DEBUG=1 adds the stack', async () => {
    answer = '{}';
    for (const args of [['list'], ['cron', 'list'], ['tenant', 'list']]) {
      const r = await run({}, ...args);
      expect(r.code, args.join(' ')).to.equal(1);
      expect(r.err.trim().split('\n'), r.err).to.have.length(1);
      expect(r.err).to.match(/^error: .+ \(SCHEDULER_CLI_DEBUG=1 shows where\)\n$/);
    }
    // `null` is JSON but no answer of the scheduler's: `get` and `submit` printed an empty task and exited 0.
    answer = 'null';
    for (const args of [['get', 't1'], ['submit', 'echo'], ['cancel', 't1'], ['health']]) {
      const r = await run({}, ...args);
      expect(r.code, args.join(' ')).to.equal(1);
      expect(r.err, args.join(' ')).to.match(/^error: UNEXPECTED_ANSWER \(HTTP 200\): the answer to .+ is null, not an object/);
    }
    // Another service's JSON: `health` printed `undefined` and `ready` passed (exit 0) as a probe.
    answer = '{"weird":true}';
    for (const args of [['health'], ['ready']]) {
      const r = await run({}, ...args);
      expect(r.code, args.join(' ')).to.equal(1);
      expect(r.err, args.join(' ')).to.match(
        /^error: the answer to GET \/(healthz|readyz) has no status of the scheduler's .*"weird":true/,
      );
    }
    answer = '{}';
    const debug = await run({ SCHEDULER_CLI_DEBUG: '1' }, 'list');
    expect(debug.code).to.equal(1);
    expect(debug.err.trim().split('\n').length).to.be.above(1);
  });
});
