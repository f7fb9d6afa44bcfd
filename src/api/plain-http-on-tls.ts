/**
 * Plain HTTP sent to the HTTPS port (`http://` instead of `https://`): answered 400
 * `HTTPS_REQUIRED` in plain HTTP, as nginx answers it ("The plain HTTP request was sent to HTTPS
 * port"), instead of a connection closed without a word (curl: "Empty reply from server").
 *
 * OpenSSL recognises an HTTP request line where a TLS record should start and fails the handshake
 * with `ERR_SSL_HTTP_REQUEST`; Node then emits `tlsClientError` with the TLS socket, whose
 * underlying TCP socket (`_parent`, Node's own field: no public accessor exists) is still open and
 * unencrypted. Where that field is missing or closed, the connection is closed as before.
 */
import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { HttpsRequiredError } from './http-errors';
import { socketAnswer } from './socket-answer';

/** Adds the listener to `server`, the HTTPS server fastify made (buildApp with `https`). */
export function answerPlainHttpOnTls(server: TlsServer): void {
  server.on('tlsClientError', (err: Error & { code?: string }, tlsSocket: TLSSocket) => {
    if (err.code !== 'ERR_SSL_HTTP_REQUEST') return;
    const raw = (tlsSocket as unknown as { _parent?: Socket })._parent;
    if (!raw || raw.destroyed || !raw.writable) return;
    raw.end(socketAnswer(400, new HttpsRequiredError()));
  });
}
