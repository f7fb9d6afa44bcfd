/**
 * HTTPS settings of the REST API (config `tls`, docs/OPERATIONS.md "HTTPS"): the certificate and
 * key files read and checked at start-up, so a missing, unreadable or wrong file stops the service
 * with one line naming it (exit 78) instead of failing the first connection.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError, type Config } from '../config';

/** What fastify's `https` option (Node's `tls.createServer`) is given. */
export interface HttpsOptions {
  cert: Buffer;
  key: Buffer;
  /** With a CA file: clients must present a certificate it issued (mutual TLS). */
  ca?: Buffer;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
}

/** The config key and environment variable of each file, for the error line. */
const NAMES = {
  certFile: 'tls.certFile (env TLS_CERT_FILE)',
  keyFile: 'tls.keyFile (env TLS_KEY_FILE)',
  caFile: 'tls.caFile (env TLS_CA_FILE)',
} as const;

/**
 * Reads and checks the files of `tls`: the certificate chain and the key (PEM) must parse and
 * match; a CA file must hold at least one PEM certificate.
 * @returns the `https` options, or null when `tls.certFile` is not set (plain HTTP)
 * @throws ConfigError (exit 78) naming the key, its environment variable and the file: unreadable
 *   (missing, a directory, no permission), not PEM, or a key that does not match the certificate
 */
export function httpsOptionsOf(tls: Config['tls']): HttpsOptions | null {
  if (tls.certFile === null || tls.keyFile === null) return null;
  const cert = readFile('certFile', tls.certFile);
  const key = readFile('keyFile', tls.keyFile);
  check('certFile', tls.certFile, 'is not a PEM certificate', () => createSecureContext({ cert }));
  check('keyFile', tls.keyFile, 'is not a PEM private key', () => createSecureContext({ key }));
  check('keyFile', tls.keyFile, `does not match the certificate in ${tls.certFile}`, () => createSecureContext({ cert, key }));
  if (tls.caFile === null) return { cert, key };
  const ca = readFile('caFile', tls.caFile);
  check('caFile', tls.caFile, 'holds no PEM certificate', () => {
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no "-----BEGIN CERTIFICATE-----" line');
    new X509Certificate(ca);
  });
  return { cert, key, ca, requestCert: true, rejectUnauthorized: true };
}

/** A certificate that expires sooner than this (ms) is warned about at start (14 days). */
export const CERT_EXPIRY_WARNING_MS = 14 * 24 * 3600 * 1000;

/**
 * The warning to log at start about the served certificate's validity at `now` (epoch ms), or null
 * when it is valid for at least {@link CERT_EXPIRY_WARNING_MS} more. Clients refuse a certificate
 * outside its validity (RFC 5280 §4.1.2.5), so an expired one fails every connection while the
 * service itself looks healthy. Only the first (leaf) certificate of the chain is read.
 * @param cert the PEM of `tls.certFile` (already checked by {@link httpsOptionsOf})
 */
export function certificateValidityWarning(cert: Buffer, file: string, now: number): string | null {
  const leaf = new X509Certificate(cert);
  const from = Date.parse(leaf.validFrom);
  const to = Date.parse(leaf.validTo);
  const at = (ms: number) => new Date(ms).toISOString();
  if (now >= to) return `the certificate in ${file} expired at ${at(to)}: clients refuse it (replace ${NAMES.certFile})`;
  if (now < from) return `the certificate in ${file} is not valid before ${at(from)}: clients refuse it until then`;
  if (to - now < CERT_EXPIRY_WARNING_MS) {
    const days = Math.floor((to - now) / (24 * 3600 * 1000));
    return `the certificate in ${file} expires at ${at(to)} (in ${days === 0 ? 'less than a day' : days === 1 ? '1 day' : `${days} days`})`;
  }
  return null;
}

function readFile(name: keyof typeof NAMES, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${NAMES[name]}: cannot read ${file}: ${oneLine(err)}`);
  }
}

function check(name: keyof typeof NAMES, file: string, what: string, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${NAMES[name]}: ${file} ${what} (${oneLine(err)})`);
  }
}

const oneLine = (err: unknown): string => ((err as Error)?.message ?? String(err)).replace(/\s+/g, ' ').trim();
