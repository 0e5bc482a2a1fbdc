import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  ErrorCodes,
  OffsetSyncError,
  errorCode,
  isOffsetSyncError,
  isRetryable,
} from './errors.js';

describe('OffsetSyncError', () => {
  it('carries code, retryable, cause and details', () => {
    const cause = new Error('socket hang up');
    const error = new OffsetSyncError('cannot reach broker', {
      code: ErrorCodes.KAFKA_BROKER_ERROR,
      retryable: true,
      cause,
      details: { broker: 'b1:9092' },
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('OffsetSyncError');
    expect(error.code).toBe('KAFKA_BROKER_ERROR');
    expect(error.retryable).toBe(true);
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ broker: 'b1:9092' });
  });

  it('defaults retryable from the code', () => {
    expect(new OffsetSyncError('x', { code: ErrorCodes.NATS_UNREACHABLE }).retryable).toBe(true);
    expect(new OffsetSyncError('x', { code: ErrorCodes.KAFKA_UNREACHABLE }).retryable).toBe(true);
    expect(new OffsetSyncError('x', { code: ErrorCodes.DECODE_ERROR }).retryable).toBe(false);
    expect(new OffsetSyncError('x', { code: ErrorCodes.NATS_UNREACHABLE, retryable: false }).retryable).toBe(
      false,
    );
  });

  it('has no cause property when none is given', () => {
    expect('cause' in new OffsetSyncError('x', { code: ErrorCodes.INTERNAL })).toBe(false);
  });

  it('codes are their own names', () => {
    for (const [key, value] of Object.entries(ErrorCodes)) expect(value).toBe(key);
  });
});

describe('helpers', () => {
  it('classify foreign errors as INTERNAL and not retryable', () => {
    const foreign = new Error('boom');
    expect(isOffsetSyncError(foreign)).toBe(false);
    expect(errorCode(foreign)).toBe(ErrorCodes.INTERNAL);
    expect(errorCode('a string')).toBe(ErrorCodes.INTERNAL);
    expect(isRetryable(foreign)).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
  });

  it('read our own errors', () => {
    const error = new OffsetSyncError('x', { code: ErrorCodes.TIMEOUT });
    expect(isOffsetSyncError(error)).toBe(true);
    expect(errorCode(error)).toBe(ErrorCodes.TIMEOUT);
    expect(isRetryable(error)).toBe(true);
  });
});

describe('ConfigError', () => {
  it('lists every problem on its own line', () => {
    const error = new ConfigError([
      { path: 'nats.servers', message: 'must list at least one server' },
      { path: 'links.0.source', message: 'unknown cluster "a"' },
    ]);
    expect(error).toBeInstanceOf(OffsetSyncError);
    expect(error.name).toBe('ConfigError');
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.retryable).toBe(false);
    expect(error.problems).toHaveLength(2);
    expect(error.message.split('\n')).toEqual([
      'invalid configuration (2 problems):',
      '  - nats.servers: must list at least one server',
      '  - links.0.source: unknown cluster "a"',
    ]);
  });
});
