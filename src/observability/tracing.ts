import { trace, Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { JsonLineSpanExporter } from './json-line-span-exporter';

/** Which exporter the service and its worker processes use for spans (config `tracesExporter`). */
export type TracesExporter = 'none' | 'console' | 'otlp';

/** The instrumentation scope of every span the scheduler makes (the package's name). */
export const TRACER_NAME = 'actor-task-scheduler';

/** A tracer provider of this process; `shutdown` flushes the spans not yet exported, then stops it. */
export interface TracingHandle {
  /** The scheduler's tracer on this provider. */
  tracer: Tracer;
  shutdown(): Promise<void>;
}

/** Where spans go and how often they are sent (config `tracesExporter`, `otlpTracesEndpoint`, `tracesExportDelayMs`). */
export interface TracingOptions {
  /** OTLP/HTTP traces URL (null: the exporter's default and its `OTEL_EXPORTER_OTLP_*` env variables). */
  otlpEndpoint: string | null;
  /**
   * The batch span processor's delay between exports (ms; its `scheduledDelayMillis`, the
   * OpenTelemetry SDK's `OTEL_BSP_SCHEDULE_DELAY`, default 5000). Spans still queued are sent at
   * shutdown whatever the delay.
   */
  exportDelayMs?: number;
  /**
   * Also register the provider as the process's global one (the OpenTelemetry API keeps it in
   * its global registry), so spans of handlers or libraries in this process join. Only once per
   * process: the worker processes and the service's `main` do; in-process test services do not.
   */
  global?: boolean;
}

/**
 * Makes a tracer provider exporting through a batch span processor to `exporter` (`console`: one
 * JSON line per span on stdout, {@link JsonLineSpanExporter}), its spans of
 * {@link schedulerResource} (this module keeps nothing). `none` makes nothing: spans cost nothing and are not recorded, and trace ids
 * still flow from the stored `traceparent`.
 * @returns a handle to flush on exit, or null for `none`
 */
export function registerTracing(exporter: TracesExporter, opts: TracingOptions): TracingHandle | null {
  if (exporter === 'none') return null;
  const spanExporter: SpanExporter =
    exporter === 'console' ? new JsonLineSpanExporter() : new OTLPTraceExporter(opts.otlpEndpoint ? { url: opts.otlpEndpoint } : {});
  const processor = new BatchSpanProcessor(
    spanExporter,
    opts.exportDelayMs !== undefined ? { scheduledDelayMillis: opts.exportDelayMs } : {},
  );
  const provider = new BasicTracerProvider({ spanProcessors: [processor], resource: schedulerResource() });
  if (opts.global) trace.setGlobalTracerProvider(provider);
  return { tracer: provider.getTracer(TRACER_NAME), shutdown: () => provider.shutdown() };
}

/**
 * The resource of the scheduler's spans: `service.name` `actor-task-scheduler` (the SDK's default is
 * `unknown_service:node`), over which `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` win, as the
 * OpenTelemetry SDK environment specification says.
 */
export function schedulerResource(): Resource {
  const fromEnv = detectResources({ detectors: [envDetector] });
  return defaultResource()
    .merge(resourceFromAttributes({ 'service.name': TRACER_NAME }))
    .merge(fromEnv);
}

/** The tracer of attempt spans: the global provider's (a no-op until {@link registerTracing} registers one). */
export function attemptTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}
