/**
 * The client's TLS files checked when the client is made, not at its first call: Node ignores a
 * CA file that holds no certificate (the call then fails as "self-signed certificate", naming no
 * file) and fails a client certificate without its key, or a key that does not match, only at the
 * handshake with an OpenSSL code. The same checks as the service's own files (api/tls.ts).
 */
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { ClientOptionError } from './errors';

/** PEM contents for an https URL: CA certificates to trust besides the system ones, and a client certificate and key. */
export interface TlsFiles {
  ca?: Buffer | string | undefined;
  cert?: Buffer | string | undefined;
  key?: Buffer | string | undefined;
}

/**
 * Checks `tls` (PEM contents): a CA holds at least one certificate; a client certificate comes with
 * its key, both parse, and they match.
 * @throws ClientOptionError naming the option (`tls.ca`, `tls.cert`, `tls.key`)
 */
export function checkTlsFiles(tls: TlsFiles | undefined): void {
  if (!tls) return;
  const { ca, cert, key } = tls;
  if (ca !== undefined)
    check('ca', 'holds no PEM certificate', () => {
      if (!String(ca).includes('-----BEGIN CERTIFICATE-----')) throw new Error('no "-----BEGIN CERTIFICATE-----" line');
      new X509Certificate(ca);
    });
  if (cert !== undefined && key === undefined)
    throw new ClientOptionError('tls.cert', 'a client certificate needs its private key (tls.key)');
  if (key !== undefined && cert === undefined)
    throw new ClientOptionError('tls.key', 'a private key needs its client certificate (tls.cert)');
  if (cert === undefined || key === undefined) return;
  check('cert', 'is not a PEM certificate', () => createSecureContext({ cert }));
  check('key', 'is not a PEM private key', () => createSecureContext({ key }));
  check('key', 'does not match the client certificate (tls.cert)', () => createSecureContext({ cert, key }));
}

function check(name: keyof TlsFiles, what: string, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    throw new ClientOptionError(`tls.${name}`, `${what} (${((err as Error)?.message ?? String(err)).replace(/\s+/g, ' ').trim()})`);
  }
}
