import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** `[seconds, nanoseconds]` (OpenTelemetry's HrTime) → epoch ms with the fraction kept. */
function hrMs(t: readonly [number, number]): number {
  return t[0] * 1000 + t[1] / 1e6;
}

/**
 * The `console` traces exporter: one JSON line per span on `write` (stdout), beside the service's
 * JSON log lines, so that a log pipeline reads both (OpenTelemetry's own `ConsoleSpanExporter`
 * prints each span as a multi-line JavaScript object). Fields: `trace_id`, `span_id`,
 * `parent_span_id` (null for a root), `name`, `kind` (OpenTelemetry's SpanKind number), `start`
 * (ISO 8601), `duration_ms`, `status` (`{code, message?}`), `attributes`, `events` (`{name, time,
 * attributes}`), `service` (the resource's `service.name`). A line that cannot be written is
 * reported as a failed export, never thrown.
 */
export class JsonLineSpanExporter implements SpanExporter {
  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(line)) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    try {
      for (const s of spans) {
        const ctx = s.spanContext();
        const line = {
          trace_id: ctx.traceId,
          span_id: ctx.spanId,
          parent_span_id: s.parentSpanContext?.spanId ?? null,
          name: s.name,
          kind: s.kind,
          start: new Date(hrMs(s.startTime)).toISOString(),
          duration_ms: Math.round(hrMs(s.duration) * 1000) / 1000,
          status: s.status,
          attributes: s.attributes,
          events: s.events.map((e) => ({ name: e.name, time: new Date(hrMs(e.time)).toISOString(), attributes: e.attributes ?? {} })),
          service: s.resource.attributes['service.name'] ?? null,
        };
        this.write(`${JSON.stringify(line)}\n`);
      }
      resultCallback({ code: 0 });
    } catch (error) {
      resultCallback({ code: 1, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}
}
