import { expect } from 'chai';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonLineSpanExporter } from '../../src/observability/json-line-span-exporter';
import { schedulerResource } from '../../src/observability/tracing';

/** `TRACES_EXPORTER=console`: one JSON line per span (OPERATIONS.md "Tracing"), named for the scheduler. */
describe('console traces exporter: one JSON line per span', () => {
  it('writes each ended span as one JSON line with its ids, parent, times, status, attributes and service', async () => {
    const lines: string[] = [];
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(new JsonLineSpanExporter((l) => lines.push(l)))],
      resource: schedulerResource(),
    });
    const tracer = provider.getTracer('t');
    const parent = tracer.startSpan('submit echo');
    const child = tracer.startSpan('task echo', { attributes: { 'task.id': 't1' } }, trace.setSpan(context.active(), parent));
    child.addEvent('claimed', { attempt: 1 });
    child.end();
    parent.end();
    await provider.shutdown();
    expect(lines).to.have.length(2);
    for (const l of lines) expect(l.endsWith('\n') && !l.slice(0, -1).includes('\n'), l).to.equal(true);
    const [childLine, parentLine] = lines.map((l) => JSON.parse(l));
    expect(parentLine).to.include({ name: 'submit echo', parent_span_id: null, service: 'actor-task-scheduler' });
    expect(childLine).to.include({ name: 'task echo', trace_id: parentLine.trace_id, parent_span_id: parentLine.span_id });
    expect(childLine.attributes).to.deep.equal({ 'task.id': 't1' });
    expect(childLine.events).to.have.length(1);
    expect(childLine.events[0]).to.include({ name: 'claimed' });
    expect(Number.isNaN(Date.parse(childLine.start))).to.equal(false);
    expect(childLine.duration_ms).to.be.a('number').and.at.least(0);
    expect(childLine.status).to.deep.equal({ code: 0 });
  });

  it('OTEL_SERVICE_NAME names the service instead', () => {
    const before = process.env.OTEL_SERVICE_NAME;
    process.env.OTEL_SERVICE_NAME = 'billing-scheduler';
    try {
      expect(schedulerResource().attributes['service.name']).to.equal('billing-scheduler');
    } finally {
      if (before === undefined) delete process.env.OTEL_SERVICE_NAME;
      else process.env.OTEL_SERVICE_NAME = before;
    }
  });
});
