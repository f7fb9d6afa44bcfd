import { clipEcho, SchedulerError } from '../domain/errors';

/*
 * The errors of the HTTP transport (a body that is not JSON, not HTTP, too slow, of another media
 * type, or a route that does not exist): catalog errors like the domain's, raised only by the
 * REST API's parser, hooks and not-found handler. Like the domain's, they carry no status: the
 * catalog's table gives it (httpStatusOf in ./error-handler.ts).
 */

/** The request body is not valid JSON. */
export class MalformedJsonError extends SchedulerError {
  readonly code = 'MALFORMED_JSON';
  constructor(reason: string) {
    super(`request body is not valid JSON: ${reason}`, { field: 'body', reason });
  }
}

/** The request is not valid HTTP (answered on the socket before routing). */
export class MalformedRequestError extends SchedulerError {
  readonly code = 'MALFORMED_REQUEST';
  constructor() {
    super('the request is not valid HTTP/1.1');
  }
}

/**
 * A plain HTTP request on the port that serves HTTPS (config `tls`): answered on the socket in
 * plain HTTP, then the connection is closed (plain-http-on-tls.ts). Send it again to `https://`.
 */
export class HttpsRequiredError extends SchedulerError {
  readonly code = 'HTTPS_REQUIRED';
  constructor() {
    super("this port serves HTTPS: send the request to https://, with the certificate's CA trusted");
  }
}

/**
 * The request did not arrive in full within `requestTimeoutMs` (a body that stopped coming):
 * answered 408 on the socket, which is then closed. Retryable: send the whole request again.
 */
export class RequestTimeoutError extends SchedulerError {
  readonly code = 'REQUEST_TIMEOUT';
  override readonly retryable = true;
  constructor(timeoutMs: number) {
    super(`the request did not arrive in full within ${timeoutMs / 1000} s`, { timeout_ms: timeoutMs });
  }
}

/** The request's Content-Type is not application/json. */
export class UnsupportedMediaTypeError extends SchedulerError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  /** @param encoding a Content-Encoding other than `identity` (RFC 9110 §8.4: 415 for a coding the server does not take) */
  constructor(contentType: string, encoding?: string) {
    if (encoding === undefined) {
      super(`Content-Type "${contentType}" is not supported; send application/json`, { field: 'content-type', content_type: contentType });
    } else {
      super(`Content-Encoding "${encoding}" is not supported; send the body uncompressed`, {
        field: 'content-encoding',
        content_encoding: encoding,
      });
    }
  }
}

/** No such route. */
export class RouteNotFoundError extends SchedulerError {
  readonly code = 'ROUTE_NOT_FOUND';
  constructor(method: string, url: string) {
    super(`no route ${method} ${clipEcho(url)}`, { method, url: clipEcho(url) });
  }
}

/**
 * A known path asked with a method it does not answer (RFC 9110 §15.5.6): `details.method`,
 * `details.url`, `details.allowed` (also the response's `Allow` header).
 */
export class MethodNotAllowedError extends SchedulerError {
  readonly code = 'METHOD_NOT_ALLOWED';
  constructor(method: string, url: string, allowed: string[]) {
    super(`${method} is not answered at ${clipEcho(url)}; it answers ${allowed.join(', ')}`, { method, url: clipEcho(url), allowed });
  }
}

/**
 * A request with more than one `Authorization` or `Content-Type` header. Both fields are singletons
 * (RFC 9110 §11.6.2 defines one credentials value, §8.3 one media type), and which copy a server, a
 * proxy or a log would use differs, so the request is refused instead of picking one.
 * `details.field` `authorization` or `content-type`, `details.count`.
 */
export class DuplicateHeaderError extends SchedulerError {
  readonly code = 'DUPLICATE_HEADER';
  constructor(header: string, count: number) {
    super(`${header}: the header is sent ${count} times; send it once`, { field: header, count });
  }
}
