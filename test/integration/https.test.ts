import { expect } from 'chai';
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import https from 'node:https';
import path from 'node:path';
import { freePort, serviceEnv } from '../helpers/service-process';
import { serviceSchemaExists } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';

const MAIN = path.resolve(__dirname, '..', '..', 'src', 'main.js');
const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'scheduler');

/** A self-signed certificate and its key (EC P-256), made by openssl in `dir`; `san`: subjectAltName. */
function selfSigned(dir: string, name: string, san: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', `/CN=${name}`, '-addext', `subjectAltName=${san}`, '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' }); // prettier-ignore
  return { cert, key };
}

/** GET over https with the given CA and client certificate; resolves with the status, rejects when TLS or the connection fails. */
function httpsGet(url: string, tls: https.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ...tls, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

/** Runs `bin/scheduler args…`; resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, SCHEDULER_URL: '', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The service as a child process with `env` (TLS files), its store in `dir` (which exists). */
function spawnService(
  dir: string,
  port: number,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; stderr: () => string; exited: Promise<number> } {
  const child = spawn(process.execPath, [MAIN], {
    env: serviceEnv(dir, port, { WORKERS: '1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
  return { child, output: () => `${err}${out}`, stderr: () => err, exited };
}

describe('HTTPS: the service serves TLS when given a certificate and a key', function () {
  this.timeout(120_000);
  const dir = tempDir();
  let server: { cert: string; key: string };
  let client: { cert: string; key: string };
  let other: { cert: string; key: string };
  const running: ChildProcess[] = [];
  before(() => {
    server = selfSigned(dir.path, 'server', 'IP:127.0.0.1,DNS:localhost');
    client = selfSigned(dir.path, 'client', 'DNS:client');
    other = selfSigned(dir.path, 'other', 'DNS:other');
  });
  afterEach(async () => {
    for (const c of running.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) {
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGKILL');
        await gone;
      }
    }
  });
  after(() => dir.remove());

  /** Starts the service with TLS env and waits until `/readyz` answers 200 over https. */
  async function startTls(
    env: Record<string, string>,
    clientTls: https.RequestOptions = {},
  ): Promise<{ url: string; output: () => string; child: ChildProcess }> {
    const port = await freePort();
    const svc = spawnService(fs.mkdtempSync(path.join(dir.path, 'svc-')), port, env);
    running.push(svc.child);
    const url = `https://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (svc.child.exitCode !== null) throw new Error(`service exited early (${svc.child.exitCode}):\n${svc.output()}`);
      const status = await httpsGet(`${url}/readyz`, { ca: fs.readFileSync(server.cert), ...clientTls }).catch(() => 0);
      if (status === 200) return { url, output: svc.output, child: svc.child };
      if (Date.now() > deadline) throw new Error(`service not ready over https:\n${svc.output()}`);
      await new Promise((r) => setTimeout(r, 50)); // polling for readiness, not timing logic
    }
  }

  it('answers over https (and not over http); the CLI talks to it with --ca-file, and says what is missing without it', async () => {
    const svc = await startTls({ TLS_CERT_FILE: server.cert, TLS_KEY_FILE: server.key });
    expect(svc.output()).to.contain(`"address":"${svc.url}"`);
    // Plain HTTP on the TLS port: a 400 in plain HTTP naming the cause (the connection was closed without a word).
    const plain = await fetch(`${svc.url.replace('https:', 'http:')}/readyz`);
    expect(plain.status, 'plain http to the TLS port').to.equal(400);
    expect(((await plain.json()) as { error: { code: string } }).error.code).to.equal('HTTPS_REQUIRED');
    const sub = await cli(['--url', svc.url, '--ca-file', server.cert, 'submit', 'echo', '--payload', '{"over": "tls"}', '--json']);
    expect(sub.code, sub.stderr).to.equal(0);
    const id = JSON.parse(sub.stdout).task_id as string;
    const got = await cli(['--url', svc.url, '--ca-file', server.cert, 'get', id, '--json']);
    expect(got.code, got.stderr).to.equal(0);
    expect(JSON.parse(got.stdout).task_id).to.equal(id);
    const untrusted = await cli(['--url', svc.url, 'list']);
    expect(untrusted.code).to.equal(3);
    expect(untrusted.stderr).to.match(/cannot reach the scheduler at https:.*self-signed certificate.*--ca-file/);
  });

  it('clients that connect and never finish a TLS hello do not hold a graceful stop (they held it for ever)', async () => {
    const svc = await startTls({ TLS_CERT_FILE: server.cert, TLS_KEY_FILE: server.key, LOG_LEVEL: 'info' });
    const port = Number(new URL(svc.url).port);
    const idle = net.connect(port, '127.0.0.1');
    const half = net.connect(port, '127.0.0.1');
    await Promise.all([once(idle, 'connect'), once(half, 'connect')]);
    half.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01])); // the first bytes of a ClientHello
    const exited = new Promise<number | null>((resolve) => svc.child.once('exit', (code) => resolve(code)));
    svc.child.kill('SIGTERM');
    const code = await exited; // bounded by the test's timeout; before the fix, never
    idle.destroy();
    half.destroy();
    expect(code, svc.output().slice(-3000)).to.equal(0);
    expect(svc.output()).to.contain('connections still open after the drain were closed').and.contain('"msg":"stopped"');
  });

  it('with TLS_CA_FILE, a client must present a certificate that CA issued (mutual TLS)', async () => {
    const mtls = { cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key) };
    const svc = await startTls({ TLS_CERT_FILE: server.cert, TLS_KEY_FILE: server.key, TLS_CA_FILE: client.cert }, mtls);
    const ca = fs.readFileSync(server.cert);
    let refused: unknown = null;
    await httpsGet(`${svc.url}/readyz`, { ca }).catch((err) => (refused = err));
    expect(refused, 'no client certificate').to.be.instanceOf(Error);
    let wrong: unknown = null;
    await httpsGet(`${svc.url}/readyz`, { ca, cert: fs.readFileSync(other.cert), key: fs.readFileSync(other.key) }).catch(
      (err) => (wrong = err),
    );
    expect(wrong, 'a certificate of another CA').to.be.instanceOf(Error);
    const list = await cli([
      '--url',
      svc.url,
      '--ca-file',
      server.cert,
      '--cert-file',
      client.cert,
      '--key-file',
      client.key,
      'list',
      '--json',
    ]);
    expect(list.code, list.stderr).to.equal(0);
  });

  it('the CLI refuses a wrong TLS file before it connects: exit 2, one line naming the flag or variable (a CA file without a certificate was ignored)', async () => {
    const junk = path.join(dir.path, 'junk-ca.pem');
    fs.writeFileSync(junk, 'not a certificate\n');
    const url = 'https://127.0.0.1:9'; // nothing is reached: the files are checked first
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--ca-file', junk], {}, /^error: --ca-file: holds no PEM certificate/],
      [[], { SCHEDULER_CA_FILE: junk }, /^error: SCHEDULER_CA_FILE: holds no PEM certificate/],
      [['--cert-file', client.cert], {}, /^error: --cert-file: a client certificate needs its private key \(--key-file\)/],
      [['--key-file', client.key], {}, /^error: --key-file: a private key needs its client certificate \(--cert-file\)/],
      [
        ['--cert-file', client.cert, '--key-file', other.key],
        {},
        /^error: --key-file: does not match the client certificate \(--cert-file\)/,
      ],
      [['--cert-file', junk, '--key-file', client.key], {}, /^error: --cert-file: is not a PEM certificate/],
      [['--ca-file', path.join(dir.path, 'no-such-ca.pem')], {}, /^error: --ca-file: cannot read .*no-such-ca\.pem: ENOENT/],
      [[], { SCHEDULER_KEY_FILE: dir.path }, /^error: SCHEDULER_KEY_FILE: cannot read .*EISDIR/],
    ];
    for (const [flags, env, message] of cases) {
      const res = await cli(['--url', url, ...flags, 'list'], env);
      expect(res.code, `${flags.join(' ')} ${JSON.stringify(env)}: ${res.stderr}`).to.equal(2);
      expect(res.stderr.trim().split('\n'), res.stderr).to.have.length(1);
      expect(res.stderr, flags.join(' ')).to.match(message);
    }
    // An http URL does not use them (as before): the junk CA does not stop it.
    const plain = await cli(['--url', 'http://127.0.0.1:9', '--ca-file', junk, 'list']);
    expect(plain.code, plain.stderr).to.equal(3);
  });

  it('a missing, unreadable or wrong file stops start-up: exit 78, one line naming the file, no store created', async () => {
    const junk = path.join(dir.path, 'junk.pem');
    fs.writeFileSync(junk, 'not a certificate\n');
    const missing = path.join(dir.path, 'no-such.crt');
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ TLS_CERT_FILE: missing, TLS_KEY_FILE: server.key }, /tls\.certFile \(env TLS_CERT_FILE\): cannot read .*no-such\.crt: ENOENT/],
      [{ TLS_CERT_FILE: junk, TLS_KEY_FILE: server.key }, /tls\.certFile \(env TLS_CERT_FILE\): .*junk\.pem is not a PEM certificate/],
      [
        { TLS_CERT_FILE: server.cert, TLS_KEY_FILE: server.cert },
        /tls\.keyFile \(env TLS_KEY_FILE\): .*server\.crt is not a PEM private key/,
      ],
      [
        { TLS_CERT_FILE: server.cert, TLS_KEY_FILE: other.key },
        /tls\.keyFile \(env TLS_KEY_FILE\): .*other\.key does not match the certificate in .*server\.crt/,
      ],
      [
        { TLS_CERT_FILE: server.cert, TLS_KEY_FILE: server.key, TLS_CA_FILE: junk },
        /tls\.caFile \(env TLS_CA_FILE\): .*junk\.pem holds no PEM certificate/,
      ],
      [{ TLS_CERT_FILE: server.cert, TLS_KEY_FILE: dir.path }, /tls\.keyFile \(env TLS_KEY_FILE\): cannot read .*EISDIR/],
      [
        { TLS_CERT_FILE: server.cert },
        /invalid configuration: tls: certFile \(env TLS_CERT_FILE\) and keyFile \(env TLS_KEY_FILE\) go together/,
      ],
    ];
    for (const [env, line] of cases) {
      const data = fs.mkdtempSync(path.join(dir.path, 'refused-'));
      const svc = spawnService(data, await freePort(), env);
      running.push(svc.child);
      const code = await svc.exited;
      const err = svc.stderr().trim();
      expect(code, err).to.equal(78);
      expect(err.split('\n'), err).to.have.length(1);
      expect(err).to.match(line);
      expect(fs.readdirSync(data), 'no store file').to.deep.equal([]);
      expect(await serviceSchemaExists(data), 'no store schema').to.equal(false);
    }
  });
});
