import { EventEmitter } from 'node:events';
import http from 'node:http';
import net from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Epoch nanoseconds. */
  start: bigint;
  end: bigint;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage?: string;
  attributes: Record<string, string | number | boolean>;
  /** Instrumentation scope name. */
  scope: string;
}

/** An OTLP AnyValue of the JSON encoding (int64 values come as strings). */
function valueOf(v: Record<string, unknown>): string | number | boolean {
  if ('stringValue' in v) return v.stringValue as string;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return Boolean(v.boolValue);
  return JSON.stringify(v);
}

/**
 * Parses an `ExportTraceServiceRequest` in the OTLP/HTTP JSON encoding
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: trace and span ids as hex
 * strings, times as decimal strings of nanoseconds).
 */
export function parseOtlpJson(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (body as { resourceSpans?: any[] }).resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes: ReceivedSpan['attributes'] = {};
        for (const a of s.attributes ?? []) attributes[a.key] = valueOf(a.value ?? {});
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
          name: s.name,
          kind: s.kind,
          start: BigInt(String(s.startTimeUnixNano)),
          end: BigInt(String(s.endTimeUnixNano)),
          statusCode: s.status?.code ?? 0,
          ...(s.status?.message ? { statusMessage: s.status.message } : {}),
          attributes,
          scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return out;
}

/**
 * A tiny OTLP/HTTP traces receiver on 127.0.0.1 (random port): accepts `POST /v1/traces` with a
 * JSON body (what @opentelemetry/exporter-trace-otlp-http sends), keeps every span, and answers
 * 200 `{}`. Anything else is 404, a body it cannot parse 400 (both counted in `rejected`).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests refused (wrong path, method, content type or body). */
  rejected = 0;
  private readonly events = new EventEmitter();
  private server: http.Server | null = null;
  private port = 0;

  /** The traces URL to configure as the exporter's endpoint. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1/traces`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
          this.rejected++;
          res.writeHead(404).end();
          return;
        }
        let spans: ReceivedSpan[];
        try {
          spans = parseOtlpJson(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          this.rejected++;
          res.writeHead(400).end();
          return;
        }
        this.spans.push(...spans);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        this.events.emit('spans');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /**
   * Resolves with the received spans once `done(spans)` is true, checked now and after each
   * export that arrives (no polling); rejects after `timeoutMs` with what had arrived.
   */
  waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<ReceivedSpan[]> {
    if (done(this.spans)) return Promise.resolve(this.spans);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done(this.spans)) return;
        cleanup();
        resolve(this.spans);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`spans not received within ${timeoutMs} ms; got: ${this.spans.map((s) => s.name).join(', ')}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.events.off('spans', check);
      };
      this.events.on('spans', check);
    });
  }

  /** The spans of one task (attribute `scheduler.task_id`), in start order. */
  spansOf(taskId: string): ReceivedSpan[] {
    return this.spans
      .filter((s) => s.attributes['scheduler.task_id'] === taskId)
      .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
