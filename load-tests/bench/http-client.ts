/**
 * HTTP client of the harness: node:http with a keep-alive agent (cheaper per request than fetch,
 * and the harness shares the machine's cores with the service). Every request observes the run's
 * abort signal. Also the Retry-After handling of a 429/503.
 */
import http from 'node:http';
import { abortReason, checkAborted, run } from './run-control';

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class HttpClient {
  readonly agent: http.Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });
  }

  request(method: string, urlPath: string, body?: string, timeoutMs = 30_000): Promise<HttpResult> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const req = http.request(
        { host: this.host, port: this.port, method, path: urlPath, headers, agent: this.agent, signal: run.signal },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => reject(run.signal.aborted ? abortReason() : err));
      req.end(body);
    });
  }

  /** GET with one retry on a connection error (a keep-alive socket the server just closed). */
  async get(urlPath: string, timeoutMs = 30_000): Promise<HttpResult> {
    try {
      return await this.request('GET', urlPath, undefined, timeoutMs);
    } catch (err) {
      checkAborted();
      return this.request('GET', urlPath, undefined, timeoutMs);
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Retry-After (seconds) of a 429/503, capped; a default when absent. */
export function retryAfterMs(res: HttpResult): number {
  const ra = Number(res.headers['retry-after']);
  return Number.isFinite(ra) && ra >= 0 ? Math.min(ra * 1000, 5000) : 250;
}
