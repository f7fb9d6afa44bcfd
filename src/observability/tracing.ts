import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';

/** Which exporter worker processes use for attempt spans (config `tracesExporter`). */
export type TracesExporter = 'none' | 'console' | 'otlp';

/** A registered tracer provider; `shutdown` flushes the spans not yet exported. */
export interface TracingHandle {
  shutdown(): Promise<void>;
}

/**
 * Registers the process-wide OpenTelemetry tracer provider for `exporter` (the OpenTelemetry API
 * keeps it in its global registry; this module keeps nothing). `none` registers nothing: the API
 * stays a no-op, spans cost nothing and are not recorded, and trace ids still flow from the
 * submitted `traceparent`.
 * @param opts.otlpEndpoint OTLP/HTTP traces URL (null: the exporter's default and its env variables)
 * @param opts.serviceName not used by the exporters directly; kept on the tracer name
 * @returns a handle to flush on exit, or null for `none`
 */
export function registerTracing(exporter: TracesExporter, opts: { otlpEndpoint: string | null }): TracingHandle | null {
  if (exporter === 'none') return null;
  const spanExporter: SpanExporter =
    exporter === 'console' ? new ConsoleSpanExporter() : new OTLPTraceExporter(opts.otlpEndpoint ? { url: opts.otlpEndpoint } : {});
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spanExporter)] });
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}

/** The tracer of attempt spans (named after the package). */
export function attemptTracer() {
  return trace.getTracer('actor-task-scheduler');
}
