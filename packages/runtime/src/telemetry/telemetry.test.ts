import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { startTelemetry, type StartTelemetryOptions, type Telemetry } from './telemetry.js';

const started: Telemetry[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.shutdown()));
});

function start(overrides: Partial<StartTelemetryOptions> = {}) {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor(exporter);
  const telemetry = startTelemetry({
    serviceName: 'offsetsync-test',
    serviceNamespace: 'offsetsync',
    instanceId: 'test-1',
    version: '0.0.0-test',
    spanProcessors: [processor],
    env: {},
    ...overrides,
  });
  started.push(telemetry);
  return { telemetry, exporter, processor };
}

describe('startTelemetry', () => {
  it('records spans with the service resource and makes them active across awaits', async () => {
    const { telemetry, exporter, processor } = start();
    expect(telemetry.registeredGlobally).toBe(true);

    await telemetry.tracer.startActiveSpan('sync', async (span) => {
      await new Promise((resolve) => setImmediate(resolve));
      expect(trace.getActiveSpan()?.spanContext().spanId).toBe(span.spanContext().spanId);
      span.end();
    });

    // Detected resource attributes resolve asynchronously; the export waits for them.
    await processor.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('sync');
    expect(span?.resource.attributes).toMatchObject({
      'service.name': 'offsetsync-test',
      'service.namespace': 'offsetsync',
      'service.instance.id': 'test-1',
      'service.version': '0.0.0-test',
    });
  });

  it('serves Prometheus metrics on a free port', async () => {
    const { telemetry } = start({ prometheus: { host: '127.0.0.1', port: 0 } });
    const address = await telemetry.metricsAddress;
    expect(address?.port).toBeGreaterThan(0);

    telemetry.meter
      .createCounter('offsetsync_test_events', { description: 'test events' })
      .add(3, { outcome: 'ok' });
    const response = await fetch(`http://127.0.0.1:${address?.port}/metrics`);
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(body).toMatch(/offsetsync_test_events_total\{[^}]*outcome="ok"[^}]*\} 3/);

    expect((await fetch(`http://127.0.0.1:${address?.port}/other`)).status).toBe(404);
  });

  it('rejects metricsAddress when the port is taken', async () => {
    const first = start({ prometheus: { host: '127.0.0.1', port: 0 } });
    const taken = await first.telemetry.metricsAddress;
    const second = start({ prometheus: { host: '127.0.0.1', port: taken?.port ?? 0 } });
    await expect(second.telemetry.metricsAddress).rejects.toThrow(/cannot serve Prometheus metrics/);
  });

  it('shuts down once, giving every caller the same promise', async () => {
    const { telemetry } = start({ prometheus: { host: '127.0.0.1', port: 0 } });
    const address = await telemetry.metricsAddress;
    const first = telemetry.shutdown();
    expect(telemetry.shutdown()).toBe(first);
    await first;
    await expect(fetch(`http://127.0.0.1:${address?.port}/metrics`)).rejects.toThrow();
  });

  it('can start again after shutdown, and a concurrent second start gets private providers', async () => {
    const one = start();
    await one.telemetry.shutdown();

    const two = start();
    expect(two.telemetry.registeredGlobally).toBe(true);
    const three = start();
    expect(three.telemetry.registeredGlobally).toBe(false);

    three.telemetry.tracer.startSpan('private').end();
    await Promise.all([two.processor.forceFlush(), three.processor.forceFlush()]);
    expect(three.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['private']);
    expect(two.exporter.getFinishedSpans()).toEqual([]);
  });

  it('exports over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const received: string[] = [];
    const collector = createServer((request: IncomingMessage, response) => {
      received.push(`${request.method} ${request.url}`);
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const port = (collector.address() as AddressInfo).port;
      const { telemetry } = start({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` } });
      telemetry.tracer.startSpan('exported').end();
      telemetry.meter.createCounter('offsetsync_test_pushed').add(1);
      await telemetry.shutdown();
      expect(received).toEqual(expect.arrayContaining(['POST /v1/traces', 'POST /v1/metrics']));
    } finally {
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});
