/**
 * Answers written straight on a connection's socket, for requests that never reach fastify
 * (unparseable HTTP, a deadline missed while the request arrived, plain HTTP on the HTTPS port):
 * one HTTP/1.1 response with the error envelope of every other answer, then the connection closes.
 */
import type { SchedulerError } from '../domain/errors';

/** Reason phrases of the statuses answered on the socket. */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * The bytes of an answer of `status` carrying `err` (`{ error: … }` as JSON), `connection: close`.
 * @param status an HTTP status of {@link STATUS_TEXT} (another gets the reason phrase `Error`)
 */
export function socketAnswer(status: number, err: SchedulerError): string {
  const body = JSON.stringify(err.toJSON());
  return (
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}
