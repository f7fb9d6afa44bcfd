import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CERT_EXPIRY_WARNING_MS, certificateValidityWarning } from '../../src/api/tls';

const DAY = 24 * 3600 * 1000;

describe('certificateValidityWarning (the served certificate at start)', () => {
  let dir: string;
  let cert: Buffer;
  let from: number;
  let to: number;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cert-validity-'));
    const certFile = path.join(dir, 'c.crt');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30',
      '-subj', '/CN=localhost', '-keyout', path.join(dir, 'c.key'), '-out', certFile,
    ], { stdio: 'ignore' }); // prettier-ignore
    cert = fs.readFileSync(certFile);
    const x = new X509Certificate(cert);
    from = Date.parse(x.validFrom);
    to = Date.parse(x.validTo);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('none while the certificate is valid for 14 days or more', () => {
    expect(certificateValidityWarning(cert, 'c.crt', from)).to.equal(null);
    expect(certificateValidityWarning(cert, 'c.crt', to - CERT_EXPIRY_WARNING_MS)).to.equal(null);
  });

  it('expiring within 14 days: when, and in how many days', () => {
    expect(certificateValidityWarning(cert, 'c.crt', to - CERT_EXPIRY_WARNING_MS + 1))
      .to.include('expires at')
      .and.include('(in 13 days)');
    expect(certificateValidityWarning(cert, 'c.crt', to - DAY - 1)).to.include('(in 1 day)');
    expect(certificateValidityWarning(cert, 'c.crt', to - 1)).to.include('(in less than a day)');
  });

  it('expired, or not valid yet (a clock that went backwards, a certificate dated ahead): clients refuse it', () => {
    const expired = certificateValidityWarning(cert, 'c.crt', to);
    expect(expired)
      .to.include(`c.crt expired at ${new Date(to).toISOString()}`)
      .and.include('clients refuse it');
    expect(certificateValidityWarning(cert, 'c.crt', from - 1)).to.include(`not valid before ${new Date(from).toISOString()}`);
  });
});
