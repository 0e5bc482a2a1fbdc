/**
 * The one error module of offsetsync. Code branches on {@link OffsetSyncError.code}, never on message
 * text; {@link OffsetSyncError.retryable} tells a consumer whether to retry with backoff or to report the
 * failure and terminate the message.
 */

/** Stable error codes. Values never change once released: dashboards, events and tests depend on them. */
export const ErrorCodes = {
  /** The configuration failed validation; see {@link ConfigError.problems}. */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** No Kafka broker could be reached (connection refused, DNS, TLS handshake, timeout). */
  KAFKA_UNREACHABLE: 'KAFKA_UNREACHABLE',
  /** A Kafka response could not be understood, or a request could not be encoded. */
  KAFKA_PROTOCOL: 'KAFKA_PROTOCOL',
  /** A Kafka broker answered with an error code. */
  KAFKA_BROKER_ERROR: 'KAFKA_BROKER_ERROR',
  /** The Kafka broker does not offer a request (API or version) the operation needs. Not retryable. */
  KAFKA_UNSUPPORTED: 'KAFKA_UNSUPPORTED',
  /** The NATS server could not be reached or the connection was lost. */
  NATS_UNREACHABLE: 'NATS_UNREACHABLE',
  /** JetStream answered a request with an API error (for example a compare-and-set on a key that changed). */
  NATS_REJECTED: 'NATS_REJECTED',
  /** A JetStream stream, consumer or KV bucket could not be created or does not match what is expected. */
  NATS_PROVISIONING: 'NATS_PROVISIONING',
  /** Bytes (a record, an event, a header) could not be decoded. */
  DECODE_ERROR: 'DECODE_ERROR',
  /** A record of a type or version this build does not know (for example a newer offsets-topic schema). */
  UNKNOWN_RECORD: 'UNKNOWN_RECORD',
  /** An offset cannot be translated and guessing would be unsafe (for example a LogAppendTime target). */
  TRANSLATION_REFUSED: 'TRANSLATION_REFUSED',
  /** The target cluster refused a commit (for a reason other than live members: see GROUP_ACTIVE). */
  COMMIT_REFUSED: 'COMMIT_REFUSED',
  /** The group has live members, so the broker refuses a commit from outside the group. Not retryable as such. */
  GROUP_ACTIVE: 'GROUP_ACTIVE',
  /**
   * The group is of a type whose members offsetsync cannot read (for example a share or streams group), so
   * whether it has live members is unknown. Not retryable.
   */
  GROUP_TYPE_UNSUPPORTED: 'GROUP_TYPE_UNSUPPORTED',
  /** The topic does not exist on the cluster (yet). */
  TOPIC_MISSING: 'TOPIC_MISSING',
  /** The topic exists but has no partition of that number. */
  PARTITION_MISSING: 'PARTITION_MISSING',
  /** An operation did not finish within its deadline. */
  TIMEOUT: 'TIMEOUT',
  /** A service start or stop went wrong (for example the stop grace period elapsed). */
  LIFECYCLE: 'LIFECYCLE',
  /**
   * A server did not accept offsetsync's credentials: a wrong SASL password or user (Kafka), a rejected
   * NATS user, token or nkey, an untrusted or expired certificate. Retryable: a corrected secret file is
   * read on the next attempt. `details.cluster` or `details.servers` names where.
   */
  AUTH_FAILED: 'AUTH_FAILED',
  /**
   * The server knows who offsetsync is but does not allow the operation: a missing Kafka ACL
   * (TOPIC/GROUP/CLUSTER_AUTHORIZATION_FAILED) or a NATS permission violation. `details.resource` names the
   * resource (`TOPIC:orders`, `GROUP:app`, `CLUSTER`, `SUBJECT:osync.translated...`) and `details.operation`
   * what was refused. Retryable: an ACL granted again takes effect without a restart.
   */
  NOT_AUTHORIZED: 'NOT_AUTHORIZED',
  /**
   * The committer refused an event it must never apply: its body names another link than the subject and
   * the durable consumer it came from, or another key than its subject. `details.resource` is the subject.
   */
  EVENT_REFUSED: 'EVENT_REFUSED',
  /**
   * The committer refused a target offset above the partition's log end or below its log start: committing
   * it would make a consumer skip or reset. `details.resource` is the subject.
   */
  OFFSET_OUT_OF_LOG_BOUNDS: 'OFFSET_OUT_OF_LOG_BOUNDS',
  /** A command line could not be understood (unknown command or option, missing argument). */
  CLI_USAGE: 'CLI_USAGE',
  /** A bug, or an error that was not classified. The code of every foreign error. */
  INTERNAL: 'INTERNAL',
} as const;

/** One of the {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * Codes whose failures are transient by nature. An error takes this as its default `retryable` unless the
 * thrower says otherwise.
 */
const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCodes.KAFKA_UNREACHABLE,
  ErrorCodes.NATS_UNREACHABLE,
  ErrorCodes.TIMEOUT,
  ErrorCodes.AUTH_FAILED,
  ErrorCodes.NOT_AUTHORIZED,
]);

/** Options of {@link OffsetSyncError}. */
export interface OffsetSyncErrorOptions {
  /** The stable code to branch on. */
  code: ErrorCode;
  /**
   * Whether trying the same operation again later may succeed. Default: `true` for KAFKA_UNREACHABLE,
   * NATS_UNREACHABLE, TIMEOUT, AUTH_FAILED and NOT_AUTHORIZED, `false` for every other code.
   */
  retryable?: boolean;
  /** The underlying error. */
  cause?: unknown;
  /** Structured facts for logs and events (group, topic, partition, broker error code...). No secrets. */
  details?: Record<string, unknown>;
}

/** Base class of every error offsetsync throws on purpose. */
export class OffsetSyncError extends Error {
  /** Stable code; see {@link ErrorCodes}. */
  readonly code: ErrorCode;
  /** Whether retrying the operation may succeed. */
  readonly retryable: boolean;
  /** Structured facts about the failure, if any. */
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: OffsetSyncErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(options.code);
    this.details = options.details === undefined ? undefined : { ...options.details };
  }
}

/** True when `e` is an {@link OffsetSyncError} (or a subclass). */
export function isOffsetSyncError(e: unknown): e is OffsetSyncError {
  return e instanceof OffsetSyncError;
}

/** The code of `e`; `INTERNAL` for anything that is not an {@link OffsetSyncError}. */
export function errorCode(e: unknown): ErrorCode {
  return isOffsetSyncError(e) ? e.code : ErrorCodes.INTERNAL;
}

/**
 * Whether `e` may succeed when retried. Foreign errors count as not retryable: an unclassified failure is
 * reported rather than retried forever; adapters classify the errors of their libraries.
 */
export function isRetryable(e: unknown): boolean {
  return isOffsetSyncError(e) && e.retryable;
}

/** One thing wrong with the configuration. */
export interface ConfigProblem {
  /** Dotted path of the setting (`nats.servers.0`), or a pseudo path such as `env:OFFSETSYNC_FOO`. */
  readonly path: string;
  /** What is wrong, in words an operator can act on. */
  readonly message: string;
}

/** Every problem found in a configuration, reported together. Never retryable. */
export class ConfigError extends OffsetSyncError {
  /** All problems, in the order they were found. Never empty. */
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[], options: { cause?: unknown } = {}) {
    super(formatProblems(problems), {
      code: ErrorCodes.CONFIG_INVALID,
      retryable: false,
      cause: options.cause,
      details: { problemCount: problems.length },
    });
    this.problems = Object.freeze(problems.map((p) => ({ path: p.path, message: p.message })));
  }
}

function formatProblems(problems: readonly ConfigProblem[]): string {
  const noun = problems.length === 1 ? 'problem' : 'problems';
  const lines = problems.map((p) => `  - ${p.path === '' ? '(root)' : p.path}: ${p.message}`);
  return [`invalid configuration (${problems.length} ${noun}):`, ...lines].join('\n');
}
