// Classifies what kafkajs throws into OffsetSyncError codes, so callers branch on `code` and `retryable`
// and never on kafkajs class names or message text.
import kafkajs from 'kafkajs';
import { ErrorCodes, OffsetSyncError, isOffsetSyncError } from '@offsetsync/contracts';

const {
  KafkaJSBrokerNotFound,
  KafkaJSConnectionError,
  KafkaJSError,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
  KafkaJSTimeout,
} = kafkajs;

/**
 * Kafka protocol error codes the adapter acts on. Numbers from the Kafka protocol; kafkajs still uses some
 * of the older names (`NOT_LEADER_FOR_PARTITION` for 6, `NOT_COORDINATOR_FOR_GROUP` for 16), which is why
 * the adapter compares numbers.
 */
export const BrokerErrorCodes = {
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_TOPIC_EXCEPTION: 17,
  ILLEGAL_GENERATION: 22,
  UNKNOWN_MEMBER_ID: 25,
  REBALANCE_IN_PROGRESS: 27,
  UNSUPPORTED_VERSION: 35,
  TOPIC_AUTHORIZATION_FAILED: 29,
  GROUP_AUTHORIZATION_FAILED: 30,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  SASL_AUTHENTICATION_FAILED: 58,
  GROUP_ID_NOT_FOUND: 69,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  // Codes of the KIP-848 consumer protocol; kafkajs 2.2.4 knows codes up to 88 only.
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
  UNSUPPORTED_ASSIGNOR: 112,
  STALE_MEMBER_EPOCH: 113,
} as const;

/** What was being done when a Kafka call failed; becomes the start of the message and part of `details`. */
export interface KafkaErrorContext {
  /** The operation, for example `listOffsets` or `commitOffsets`. */
  operation: string;
  /** Facts for logs and events (topic, partition, groupId, broker). No secrets. */
  details?: Record<string, unknown>;
}

/** Operating-system error codes of sockets that mean "cannot reach the broker". */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * Maps an error thrown by kafkajs (or by the adapter's use of it) to an {@link OffsetSyncError}:
 * - connection failures, timeouts, exhausted retries, brokers or coordinators that cannot be found ->
 *   `KAFKA_UNREACHABLE`, retryable;
 * - a broker's error code (`KafkaJSProtocolError`) -> `KAFKA_BROKER_ERROR` with
 *   `details.brokerError` (the kafkajs type name) and `details.brokerCode` (the protocol number),
 *   retryable as kafkajs classifies the code;
 * - a missing ACL (TOPIC/GROUP/CLUSTER/TRANSACTIONAL_ID_AUTHORIZATION_FAILED) -> `NOT_AUTHORIZED`, retryable
 *   (an ACL granted again works without a restart), with `details.resource` and `details.missingAcl`;
 * - SASL authentication failures -> `AUTH_FAILED` (`SASL_AUTHENTICATION_FAILED`), retryable: a corrected
 *   password file is read by the next connection;
 * - anything else -> `KAFKA_PROTOCOL`, not retryable.
 *
 * An {@link OffsetSyncError} is returned unchanged: it was classified where it was thrown.
 */
export function toOffsetSyncError(error: unknown, context: KafkaErrorContext): OffsetSyncError {
  if (isOffsetSyncError(error)) return error;
  const facts = { ...context.details, ...kafkajsFacts(error) };
  const reason = error instanceof Error ? error.message : String(error);

  if (error instanceof KafkaJSProtocolError && AUTHORIZATION_RESOURCES.has(error.code)) {
    const denied = deniedAccess(error.code, context);
    return new OffsetSyncError(
      `${context.operation} failed: not authorized: missing ACL ${denied.missingAcl} (broker error ${error.type})`,
      {
        code: ErrorCodes.NOT_AUTHORIZED,
        retryable: true,
        cause: error,
        details: { ...facts, brokerError: error.type, brokerCode: error.code, ...denied },
      },
    );
  }
  if (error instanceof KafkaJSProtocolError) {
    return new OffsetSyncError(
      `${context.operation} failed: broker error ${error.type} (${error.code}): ${reason}`,
      {
        code: ErrorCodes.KAFKA_BROKER_ERROR,
        retryable: error.retriable,
        cause: error,
        details: { ...facts, brokerError: error.type, brokerCode: error.code },
      },
    );
  }
  if (error instanceof KafkaJSSASLAuthenticationError) {
    return new OffsetSyncError(`${context.operation} failed: SASL authentication failed: ${reason}`, {
      code: ErrorCodes.AUTH_FAILED,
      retryable: true,
      cause: error,
      details: {
        ...facts,
        brokerError: 'SASL_AUTHENTICATION_FAILED',
        brokerCode: BrokerErrorCodes.SASL_AUTHENTICATION_FAILED,
      },
    });
  }
  if (isUnreachable(error)) {
    return new OffsetSyncError(`${context.operation} failed: Kafka unreachable: ${reason}`, {
      code: ErrorCodes.KAFKA_UNREACHABLE,
      retryable: true,
      cause: error,
      details: facts,
    });
  }
  return new OffsetSyncError(`${context.operation} failed: ${reason}`, {
    code: ErrorCodes.KAFKA_PROTOCOL,
    retryable: false,
    cause: error,
    details: facts,
  });
}

type AclResourceType = 'TOPIC' | 'GROUP' | 'CLUSTER' | 'TRANSACTIONAL_ID';

/** The resource type each authorization error code is about. */
const AUTHORIZATION_RESOURCES: ReadonlyMap<number, AclResourceType> = new Map([
  [BrokerErrorCodes.TOPIC_AUTHORIZATION_FAILED, 'TOPIC'],
  [BrokerErrorCodes.GROUP_AUTHORIZATION_FAILED, 'GROUP'],
  [BrokerErrorCodes.CLUSTER_AUTHORIZATION_FAILED, 'CLUSTER'],
  [BrokerErrorCodes.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 'TRANSACTIONAL_ID'],
]);

/**
 * The ACL operation each adapter call needs on each resource type (Kafka's authorization of the request
 * it sends: OffsetCommit reads the group and the topic, OffsetFetch describes them, and so on); docs/
 * security.md lists the same per service.
 */
const REQUIRED_ACL_OPERATIONS: Readonly<Record<string, Partial<Record<AclResourceType, string>>>> = {
  commitOffsets: { GROUP: 'READ', TOPIC: 'READ' },
  fetchCommittedOffsets: { GROUP: 'DESCRIBE', TOPIC: 'DESCRIBE' },
  describeGroup: { GROUP: 'DESCRIBE' },
  listGroups: { CLUSTER: 'DESCRIBE' },
  listOffsets: { TOPIC: 'DESCRIBE' },
  metadata: { TOPIC: 'DESCRIBE' },
  topicIdentities: { TOPIC: 'DESCRIBE' },
  fetchRecords: { TOPIC: 'READ' },
  // A kafkajs consumer: joins its group, fetches and commits.
  consume: { GROUP: 'READ', TOPIC: 'READ' },
};

/**
 * The operations that imply another in Kafka's authorizer (an ACL allowing READ on a topic also allows
 * DESCRIBE on it): a refused DESCRIBE is as often a revoked READ, so the message names both.
 */
const IMPLIED_BY: Readonly<Record<string, readonly string[]>> = {
  DESCRIBE: ['READ', 'WRITE', 'DELETE', 'ALTER'],
  DESCRIBE_CONFIGS: ['ALTER_CONFIGS'],
};

/**
 * What was refused, as the operator must grant it: `resource` (`TOPIC:orders`) and `missingAcl`
 * (`ALLOW DESCRIBE on TOPIC:orders (READ, WRITE, DELETE or ALTER imply it)`).
 */
function deniedAccess(
  code: number,
  context: KafkaErrorContext,
): { resource: string; resourceType: AclResourceType; aclOperation: string; missingAcl: string } {
  const resourceType = AUTHORIZATION_RESOURCES.get(code) ?? 'CLUSTER';
  const name =
    resourceType === 'TOPIC'
      ? context.details?.topic
      : resourceType === 'GROUP'
        ? context.details?.groupId
        : resourceType === 'CLUSTER'
          ? 'kafka-cluster'
          : undefined;
  const resource = `${resourceType}:${typeof name === 'string' ? name : '?'}`;
  const aclOperation = REQUIRED_ACL_OPERATIONS[context.operation]?.[resourceType] ?? 'ALL';
  const implying = IMPLIED_BY[aclOperation];
  const implied =
    implying === undefined ? '' : ` (${implying.slice(0, -1).join(', ')} or ${implying.at(-1)} imply it)`;
  return {
    resource,
    resourceType,
    aclOperation,
    missingAcl: `ALLOW ${aclOperation} on ${resource}${implied}`,
  };
}

function isUnreachable(error: unknown): boolean {
  if (
    error instanceof KafkaJSConnectionError ||
    error instanceof KafkaJSRequestTimeoutError ||
    error instanceof KafkaJSTimeout ||
    error instanceof KafkaJSNumberOfRetriesExceeded ||
    error instanceof KafkaJSBrokerNotFound ||
    error instanceof KafkaJSGroupCoordinatorNotFound
  ) {
    return true;
  }
  // kafkajs does not declare this class in its typings; its name is set in its constructor.
  if (error instanceof KafkaJSError && error.name === 'KafkaJSNoBrokerAvailableError') return true;
  return isNetworkError(error);
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && NETWORK_ERROR_CODES.has(code);
}

/** The kafkajs class name and, for exhausted retries, what the last attempt failed with. */
function kafkajsFacts(error: unknown): Record<string, unknown> {
  if (!(error instanceof KafkaJSError)) return {};
  const facts: Record<string, unknown> = { kafkajsError: error.name };
  if (error instanceof KafkaJSNumberOfRetriesExceeded && error.cause instanceof Error) {
    facts.lastError = error.cause.name;
    if (error.cause instanceof KafkaJSProtocolError) facts.brokerError = error.cause.type;
  }
  return facts;
}
