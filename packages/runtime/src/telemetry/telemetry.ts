import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, metrics, propagation, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  NoopSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_NAMESPACE,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** Options of {@link startTelemetry}. */
export interface StartTelemetryOptions {
  /** `service.name`, for example `offsetsync-collector`. */
  serviceName: string;
  /** `service.namespace` (config `telemetry.serviceNamespace`). */
  serviceNamespace: string;
  /** `service.instance.id` (config `instance.id`). */
  instanceId: string;
  /** `service.version`. */
  version: string;
  /** Serve Prometheus metrics on `host:port` (port 0 picks a free port; see {@link Telemetry.metricsAddress}). */
  prometheus?: { host: string; port: number } | undefined;
  /** Extra span processors, for example an in-memory exporter in tests. */
  spanProcessors?: SpanProcessor[];
  /**
   * Where the `OTEL_EXPORTER_OTLP_*` endpoints and `OTEL_METRIC_EXPORT_INTERVAL` are read. Default:
   * `process.env`. (Exporter details such as headers and the SDK's own `OTEL_*` switches are still read
   * from `process.env` by the OpenTelemetry packages.)
   */
  env?: NodeJS.ProcessEnv;
}

/** Running telemetry. */
export interface Telemetry {
  /** Tracer of this service. */
  readonly tracer: Tracer;
  /** Meter of this service. */
  readonly meter: Meter;
  /**
   * Address the Prometheus endpoint (`/metrics`) listens on, once it does; undefined without Prometheus.
   * Rejects when the port cannot be bound: `main` should await it so that fails start-up.
   */
  readonly metricsAddress: Promise<{ host: string; port: number } | undefined>;
  /**
   * Whether this instance's providers are the process-wide OpenTelemetry globals. Only one Telemetry is
   * registered at a time; one started while another is running works through its own tracer and meter
   * but is not global (code calling `trace.getTracer()` reaches the first).
   */
  readonly registeredGlobally: boolean;
  /** Flushes and stops exporters and the metrics endpoint. Runs once; every call returns the same promise. */
  shutdown(): Promise<void>;
}

/** Whether a running Telemetry owns the OpenTelemetry globals. */
let globalsTaken = false;

/**
 * Starts OpenTelemetry for a service: traces and metrics with a resource naming the service, OTLP/HTTP
 * exporters when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`) is
 * set, and a Prometheus endpoint when asked. No auto-instrumentation.
 *
 * Spans are recorded even with no exporter configured, so logs always carry real trace ids that match
 * across services.
 *
 * The first call registers global providers (through the Node SDK, which also installs the async context
 * manager and the W3C propagator). Calling it again while that Telemetry runs does not fail: the new one
 * gets private providers ({@link Telemetry.registeredGlobally} is false). After `shutdown()` the globals are
 * released, so tests may start telemetry again.
 */
export function startTelemetry(options: StartTelemetryOptions): Telemetry {
  const env = options.env ?? process.env;
  const resource = defaultResource().merge(
    resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName,
      [ATTR_SERVICE_NAMESPACE]: options.serviceNamespace,
      [ATTR_SERVICE_INSTANCE_ID]: options.instanceId,
      [ATTR_SERVICE_VERSION]: options.version,
    }),
  );

  const spanProcessors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  const traceUrl = otlpEndpoint(env, 'TRACES', 'v1/traces');
  if (traceUrl !== undefined)
    spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: traceUrl })));
  if (spanProcessors.length === 0) spanProcessors.push(new NoopSpanProcessor());

  const metricReaders: IMetricReader[] = [];
  const metricsUrl = otlpEndpoint(env, 'METRICS', 'v1/metrics');
  if (metricsUrl !== undefined) {
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    metricReaders.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: metricsUrl }),
        ...(Number.isInteger(interval) && interval > 0 ? { exportIntervalMillis: interval } : {}),
      }),
    );
  }

  let server: Server | undefined;
  let metricsAddress: Promise<{ host: string; port: number } | undefined> = Promise.resolve(undefined);
  if (options.prometheus !== undefined) {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    metricReaders.push(exporter);
    server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method === 'GET' && path === '/metrics') {
        exporter.getMetricsRequestHandler(request, response);
      } else {
        response.statusCode = 404;
        response.end('not found; metrics are at /metrics\n');
      }
    });
    // The endpoint alone must not keep a process alive that is otherwise done.
    server.unref();
    metricsAddress = listen(server, options.prometheus.host, options.prometheus.port);
    // Whoever awaits `metricsAddress` gets the rejection; this handler only stops Node from treating it as
    // unhandled before someone does.
    void metricsAddress.catch(() => undefined);
  }

  const registeredGlobally = !globalsTaken;
  let tracer: Tracer;
  let meter: Meter;
  let stopProviders: () => Promise<void>;
  if (registeredGlobally) {
    globalsTaken = true;
    const sdk = new NodeSDK({
      resource,
      autoDetectResources: true,
      instrumentations: [],
      spanProcessors,
      metricReaders,
      // An explicit empty list keeps the SDK from configuring an OTLP log exporter from the environment.
      logRecordProcessors: [],
    });
    sdk.start();
    tracer = trace.getTracer(options.serviceName, options.version);
    meter = metrics.getMeter(options.serviceName, options.version);
    stopProviders = async () => {
      try {
        await sdk.shutdown();
      } finally {
        trace.disable();
        metrics.disable();
        propagation.disable();
        context.disable();
        globalsTaken = false;
      }
    };
  } else {
    const tracerProvider = new BasicTracerProvider({ resource, spanProcessors });
    const meterProvider = new MeterProvider({ resource, readers: metricReaders });
    tracer = tracerProvider.getTracer(options.serviceName, options.version);
    meter = meterProvider.getMeter(options.serviceName, options.version);
    stopProviders = async () => {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    };
  }

  let shutdownPromise: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    shutdownPromise ??= shutdownAll(stopProviders, server);
    return shutdownPromise;
  };
  return { tracer, meter, metricsAddress, registeredGlobally, shutdown };
}

async function shutdownAll(stopProviders: () => Promise<void>, server: Server | undefined): Promise<void> {
  const results = await Promise.allSettled([
    stopProviders(),
    server === undefined ? undefined : closeServer(server),
  ]);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failures.length > 0) {
    throw new OffsetSyncError('telemetry shutdown failed', {
      code: ErrorCodes.INTERNAL,
      cause: failures.length === 1 ? failures[0] : new AggregateError(failures),
    });
  }
}

/**
 * The OTLP/HTTP endpoint of one signal: the signal-specific variable as is, else the general one with the
 * signal path appended (as the OTLP exporter specification prescribes); undefined when neither is set.
 */
function otlpEndpoint(
  env: NodeJS.ProcessEnv,
  signal: 'TRACES' | 'METRICS',
  path: string,
): string | undefined {
  const specific = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim();
  if (specific) return specific;
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!general) return undefined;
  return `${general.endsWith('/') ? general : `${general}/`}${path}`;
}

function listen(server: Server, host: string, port: number): Promise<{ host: string; port: number }> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      reject(
        new OffsetSyncError(`cannot serve Prometheus metrics on ${host}:${port}: ${error.message}`, {
          code: ErrorCodes.INTERNAL,
          cause: error,
          details: { host, port },
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address() as AddressInfo;
      resolve({ host: address.address, port: address.port });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
