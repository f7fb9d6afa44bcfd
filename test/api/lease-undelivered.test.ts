import { expect } from 'chai';
import net from 'node:net';
import type { ClaimedTask } from '../../src/domain/task';
import type { ExternalGateway, LeasedAttempt } from '../../src/services/ports';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/**
 * A pull worker that closes at the instant its lease request is answered: the tasks were claimed
 * for it, but the connection closed before the answer was written out. They go back at once as
 * free retries (`leaseUndelivered`), instead of sitting RUNNING until their lease expires and
 * then being charged `worker_lost` (a helper's 16 closes lost 5 tasks of `max_retries: 0` that way).
 * Real sockets: the stand-in dispatcher answers when the test says, and records what comes back.
 */
describe('pull lease: an answer whose connection closed before it was written out gives its tasks back', () => {
  let f: ApiFixture;
  let port: number;
  let answerLease: (tasks: LeasedAttempt[]) => void = () => undefined;
  let leaseAsked: Promise<void>;
  let leaseAskedNow: () => void;
  let leftNow: () => void = () => undefined;
  const undelivered: Array<Array<{ taskId: string; attempt: number }>> = [];
  let undeliveredNow: () => void = () => undefined;
  const gateway: ExternalGateway = {
    complete: () => Promise.reject(new Error('not here')),
    lease: () =>
      new Promise((resolve) => {
        answerLease = resolve;
        leaseAskedNow();
      }),
    leaveLease: () => leftNow(),
    leaseUndelivered: (attempts) => {
      undelivered.push(attempts);
      undeliveredNow();
    },
  };

  const leased = (id: string, attempt: number): LeasedAttempt => ({
    task: {
      id,
      attempt,
      taskType: 'resize',
      payload: {},
      timeoutSeconds: 300,
      idempotencyKey: null,
      dueAt: 0,
      retry: { maxRetries: 0, backoff: 'exponential', delaySeconds: 1, maxDelaySeconds: 60, jitter: false },
      partition: 0,
      tenantId: 'default',
      startedAt: 0,
    } as unknown as ClaimedTask,
    queue: 'jobs',
    leaseExpiresAt: f.clock.now() + 60_000,
    traceparent: null,
  });

  beforeEach(async () => {
    undelivered.length = 0;
    leaseAsked = new Promise((r) => (leaseAskedNow = r));
    f = await apiFixture({ externalQueues: { jobs: { transport: 'http' } } }, undefined, {}, gateway);
    await f.app.listen({ port: 0, host: '127.0.0.1' });
    port = (f.app.server.address() as net.AddressInfo).port;
  });
  afterEach(() => f.close());

  /** Sends a lease request on a raw socket; resolves with the socket once the service waits on the dispatcher. */
  async function leaseRequest(): Promise<{ socket: net.Socket; text: () => string; ended: Promise<void> }> {
    const body = JSON.stringify({ worker_id: 'w1', wait_s: 20 });
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(
      `POST /api/v1/queues/jobs/lease HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await leaseAsked;
    return { socket, text: () => text, ended };
  }

  it('the client gone before the answer: the claimed attempts are given back', async () => {
    const { socket } = await leaseRequest();
    const left = new Promise<void>((r) => (leftNow = r));
    socket.destroy();
    await left; // the service saw the connection close
    const back = new Promise<void>((r) => (undeliveredNow = r));
    answerLease([leased('t1', 1), leased('t2', 3)]);
    await back;
    expect(undelivered).to.deep.equal([
      [
        { taskId: 't1', attempt: 1 },
        { taskId: 't2', attempt: 3 },
      ],
    ]);
  });

  it('an answer that cannot be serialised: the client gets an error and the attempts are given back', async () => {
    const { socket, text } = await leaseRequest();
    const answered = new Promise<void>((r) => socket.on('data', () => /\r\n\r\n\{/.test(text()) && r()));
    const back = new Promise<void>((r) => (undeliveredNow = r));
    const bad = leased('t1', 2);
    (bad.task as { payload: unknown }).payload = { n: BigInt(1) };
    answerLease([bad]);
    await Promise.all([answered, back]);
    expect(text()).to.match(/^HTTP\/1\.1 500/);
    expect(text()).not.to.include('"t1"');
    expect(undelivered).to.deep.equal([[{ taskId: 't1', attempt: 2 }]]);
    socket.destroy();
  });

  it('an answer the client read: nothing is given back', async () => {
    const { socket, text } = await leaseRequest();
    const answered = new Promise<void>((r) => socket.on('data', () => text().includes('"t1"') && r()));
    answerLease([leased('t1', 1)]);
    await answered;
    expect(text()).to.match(/^HTTP\/1\.1 200/);
    socket.destroy();
    // The service's side of the connection closed (its response's close listeners have run).
    for (;;) {
      const open = await new Promise<number>((r) => f.app.server.getConnections((_e, n) => r(n)));
      if (open === 0) break;
      await new Promise((r) => setImmediate(r));
    }
    expect(undelivered).to.deep.equal([]);
  });
});
