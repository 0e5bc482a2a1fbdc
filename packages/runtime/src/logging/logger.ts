import { isSpanContextValid, trace } from '@opentelemetry/api';
import pinoPretty from 'pino-pretty';
import { pino, type DestinationStream, type Level, type Logger } from 'pino';

/** The logger every service uses: pino, JSON lines. */
export type { Logger } from 'pino';

/** What secrets are replaced with in log records. */
const LOG_REDACTION = '***';

/**
 * Paths redacted in every log record. A safety net: callers still log `redactConfig(config)` rather than
 * the raw configuration.
 */
const REDACTED_LOG_PATHS: readonly string[] = [
  'password',
  'token',
  'sasl.password',
  '*.password',
  '*.token',
  '*.sasl.password',
  'config.nats.password',
  'config.nats.token',
  'config.clusters.*.sasl.password',
  'clusters.*.sasl.password',
];

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** Service name, logged as `service` in every record. */
  service: string;
  /** Instance id, logged as `instance` in every record. */
  instanceId: string;
  /** Minimum level written; `silent` writes nothing. */
  level: Level | 'silent';
  /** Human-readable lines (pino-pretty, colours on a terminal) instead of JSON lines. Default: `false`. */
  pretty?: boolean;
  /** Where records go. Default: standard output. Tests pass a writable stream to capture them. */
  destination?: DestinationStream | NodeJS.WritableStream;
}

/**
 * Creates the service logger: JSON lines with `service` and `instance`, an ISO `time`, the level as a
 * label, `trace_id`/`span_id` of the active OpenTelemetry span when there is one, and secrets redacted.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const logger = pino(
    {
      level: options.level,
      base: { service: options.service, instance: options.instanceId },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: traceFields,
      redact: { paths: [...REDACTED_LOG_PATHS], censor: LOG_REDACTION },
    },
    options.pretty === true
      ? pinoPretty({
          sync: true,
          destination: options.destination ?? 1,
          colorize: options.destination === undefined && process.stdout.isTTY,
        })
      : (options.destination ?? pino.destination({ dest: 1, sync: true })),
  );
  return logger;
}

/** Correlates a log record with the trace it was written in. */
function traceFields(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
