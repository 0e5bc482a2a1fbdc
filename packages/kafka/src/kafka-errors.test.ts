import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes, toOffsetSyncError } from './kafka-errors.js';

/** A kafkajs error built as kafkajs builds it (its typings omit some classes and constructor arguments). */
function kafkajsError(name: string, ...args: unknown[]): Error {
  const ErrorClass = (kafkajs as unknown as Record<string, new (...a: unknown[]) => Error>)[name];
  if (ErrorClass === undefined) throw new Error(`kafkajs exports no ${name}`);
  return new ErrorClass(...args);
}

// The broker's error codes become kafkajs errors through this function, as in kafkajs' own parsers.
const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  createErrorFromCode: (code: number) => Error;
};

const context = { operation: 'listOffsets', details: { topic: 'orders', partition: 3 } };

describe('toOffsetSyncError', () => {
  it('maps a broker error code to KAFKA_BROKER_ERROR with its name, number and kafkajs retriability', () => {
    const notLeader = toOffsetSyncError(
      createErrorFromCode(BrokerErrorCodes.NOT_LEADER_OR_FOLLOWER),
      context,
    );
    expect(notLeader).toBeInstanceOf(OffsetSyncError);
    expect(notLeader.code).toBe(ErrorCodes.KAFKA_BROKER_ERROR);
    expect(notLeader.retryable).toBe(true);
    expect(notLeader.details).toEqual({
      topic: 'orders',
      partition: 3,
      kafkajsError: 'KafkaJSProtocolError',
      brokerError: 'NOT_LEADER_FOR_PARTITION',
      brokerCode: 6,
    });
    expect(notLeader.message).toMatch(/^listOffsets failed: broker error NOT_LEADER_FOR_PARTITION \(6\)/);

    const unknownMember = toOffsetSyncError(createErrorFromCode(BrokerErrorCodes.UNKNOWN_MEMBER_ID), context);
    expect(unknownMember.retryable).toBe(false);
    expect(unknownMember.details).toMatchObject({ brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 });
  });

  it.each([
    [
      BrokerErrorCodes.TOPIC_AUTHORIZATION_FAILED,
      'listOffsets',
      { topic: 'orders' },
      'ALLOW DESCRIBE on TOPIC:orders (READ, WRITE, DELETE or ALTER imply it)',
    ],
    [
      BrokerErrorCodes.GROUP_AUTHORIZATION_FAILED,
      'commitOffsets',
      { groupId: 'app' },
      'ALLOW READ on GROUP:app',
    ],
    [
      BrokerErrorCodes.TOPIC_AUTHORIZATION_FAILED,
      'commitOffsets',
      { groupId: 'app', topic: 't' },
      'ALLOW READ on TOPIC:t',
    ],
    [
      BrokerErrorCodes.GROUP_AUTHORIZATION_FAILED,
      'fetchCommittedOffsets',
      { groupId: 'g' },
      'ALLOW DESCRIBE on GROUP:g (READ, WRITE, DELETE or ALTER imply it)',
    ],
    [
      BrokerErrorCodes.CLUSTER_AUTHORIZATION_FAILED,
      'listGroups',
      {},
      'ALLOW DESCRIBE on CLUSTER:kafka-cluster (READ, WRITE, DELETE or ALTER imply it)',
    ],
    [BrokerErrorCodes.TOPIC_AUTHORIZATION_FAILED, 'fetchRecords', { topic: 'x' }, 'ALLOW READ on TOPIC:x'],
  ])(
    'maps authorization error %i of %s to NOT_AUTHORIZED naming the missing ACL',
    (code, operation, details, acl) => {
      const mapped = toOffsetSyncError(createErrorFromCode(code), { operation, details });
      expect(mapped.code).toBe(ErrorCodes.NOT_AUTHORIZED);
      expect(mapped.retryable).toBe(true);
      expect(mapped.details?.missingAcl).toBe(acl);
      expect(mapped.message).toContain(`missing ACL ${acl}`);
    },
  );

  it('keeps the cause', () => {
    const cause = createErrorFromCode(BrokerErrorCodes.OFFSET_OUT_OF_RANGE);
    expect(toOffsetSyncError(cause, context).cause).toBe(cause);
  });

  it.each([
    [
      'connection refused',
      kafkajsError('KafkaJSConnectionError', 'Connection error: connect ECONNREFUSED', {
        code: 'ECONNREFUSED',
      }),
    ],
    ['connection closed', kafkajsError('KafkaJSConnectionClosedError', 'Closed connection')],
    [
      'request timeout',
      kafkajsError('KafkaJSRequestTimeoutError', 'Request Metadata(key: 3, version: 6) timed out'),
    ],
    ['lock timeout while connecting', kafkajsError('KafkaJSLockTimeout', 'Timeout while acquiring lock')],
    [
      'retries exhausted',
      kafkajsError(
        'KafkaJSNumberOfRetriesExceeded',
        kafkajsError('KafkaJSConnectionError', 'Connection error'),
        {
          retryCount: 5,
          retryTime: 1000,
        },
      ),
    ],
    [
      'broker not in metadata',
      kafkajsError('KafkaJSBrokerNotFound', 'Broker 2 not found in the cached metadata'),
    ],
    ['no coordinator', kafkajsError('KafkaJSGroupCoordinatorNotFound', 'Failed to find group coordinator')],
    ['socket error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })],
  ])('maps %s to KAFKA_UNREACHABLE, retryable', (_name, error) => {
    const mapped = toOffsetSyncError(error, context);
    expect(mapped.code).toBe(ErrorCodes.KAFKA_UNREACHABLE);
    expect(mapped.retryable).toBe(true);
    expect(mapped.cause).toBe(error);
    expect(mapped.details).toMatchObject({ topic: 'orders', partition: 3 });
  });

  it('records what the last attempt failed with when retries ran out', () => {
    const last = createErrorFromCode(BrokerErrorCodes.LEADER_NOT_AVAILABLE);
    const error = kafkajsError('KafkaJSNumberOfRetriesExceeded', last, { retryCount: 5, retryTime: 1000 });
    expect(toOffsetSyncError(error, context).details).toMatchObject({
      kafkajsError: 'KafkaJSNumberOfRetriesExceeded',
      lastError: 'KafkaJSProtocolError',
      brokerError: 'LEADER_NOT_AVAILABLE',
    });
  });

  it('maps a SASL failure to AUTH_FAILED, retryable (a corrected password file is read on the next try)', () => {
    const mapped = toOffsetSyncError(
      kafkajsError('KafkaJSSASLAuthenticationError', 'SASL PLAIN authentication failed'),
      context,
    );
    expect(mapped.code).toBe(ErrorCodes.AUTH_FAILED);
    expect(mapped.retryable).toBe(true);
    expect(mapped.details).toMatchObject({ brokerError: 'SASL_AUTHENTICATION_FAILED', brokerCode: 58 });
  });

  it.each([
    ['a partial message', kafkajsError('KafkaJSPartialMessageError', 'Tried to decode a partial message')],
    ['a non-retriable kafkajs error', kafkajsError('KafkaJSNonRetriableError', 'API Versions not supported')],
    ['a generic kafkajs error', kafkajsError('KafkaJSError', 'Invalid partition metadata')],
    ['a foreign error', new TypeError('Cannot read properties of undefined')],
    ['a thrown string', 'something odd'],
  ])('maps %s to KAFKA_PROTOCOL, not retryable', (_name, error) => {
    const mapped = toOffsetSyncError(error, context);
    expect(mapped.code).toBe(ErrorCodes.KAFKA_PROTOCOL);
    expect(mapped.retryable).toBe(false);
    expect(mapped.message).toMatch(/^listOffsets failed: /);
  });

  it('returns an OffsetSyncError unchanged', () => {
    const error = new OffsetSyncError('refused', { code: ErrorCodes.COMMIT_REFUSED });
    expect(toOffsetSyncError(error, context)).toBe(error);
  });
});
