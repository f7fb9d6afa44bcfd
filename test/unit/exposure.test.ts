import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError } from '../../src/config';
import { assertSafeExposure, isLoopback } from '../../src/tenancy/exposure';
import { hashApiKey } from '../../src/tenancy/api-keys';

describe('exposure: no open API on a public HOST', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', 'LOCALHOST']) expect(isLoopback(h), h).to.equal(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'example.com', '128.0.0.1']) expect(isLoopback(h), h).to.equal(false);
  });

  it('refuses a public HOST without keys, unless ALLOW_UNAUTHENTICATED or keys are configured', () => {
    const base = { host: '0.0.0.0', apiKeys: [], allowUnauthenticated: false };
    expect(() => assertSafeExposure(base)).to.throw(ConfigError, /HOST.*ALLOW_UNAUTHENTICATED/);
    expect(() => assertSafeExposure({ ...base, allowUnauthenticated: true })).to.not.throw();
    expect(() => assertSafeExposure({ ...base, apiKeys: [{ sha256: hashApiKey('k'), admin: true }] })).to.not.throw();
    expect(() => assertSafeExposure({ ...base, host: '127.0.0.1' })).to.not.throw();
  });

  it('the service exits 78 with one line naming HOST when started that way', async function () {
    this.timeout(20_000);
    const main = path.resolve(__dirname, '..', '..', 'src', 'main.js');
    const child = spawn(process.execPath, [main], {
      env: { ...process.env, NODE_ENV: 'test', HOST: '0.0.0.0', PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(78);
    expect(err.trim().split('\n')).to.have.length(1);
    expect(err).to.match(/host \(env HOST\) "0.0.0.0".*ALLOW_UNAUTHENTICATED=true/);
  });
});
