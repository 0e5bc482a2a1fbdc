import fc from 'fast-check';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { RawOffsetsRecord } from './offsets-topic-decoder.js';
import {
  classifyConsumerFailure,
  consumerFailureCode,
  handleInChunks,
  type ChunkedBatch,
} from './offsets-topic-consumer.js';

const {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} = kafkajs;

/** A fetched batch of `count` records from offset 100, whose last offset is `lastOffset`. */
function fakeBatch(count: number, options: { lastOffset?: number; staleAfterChunks?: number } = {}) {
  const messages = Array.from({ length: count }, (_, i) => ({
    offset: String(100 + i),
    key: Buffer.from(`k${i}`),
    value: null,
  }));
  const log: string[] = [];
  let chunks = 0;
  const payload: ChunkedBatch = {
    batch: {
      partition: 7,
      messages,
      lastOffset: () => String(options.lastOffset ?? 100 + count - 1),
    },
    resolveOffset: (offset) => log.push(`resolve ${offset}`),
    heartbeat: () => {
      log.push('heartbeat');
      return Promise.resolve();
    },
    isRunning: () => true,
    isStale: () => options.staleAfterChunks !== undefined && chunks >= options.staleAfterChunks,
  };
  const handled: RawOffsetsRecord[][] = [];
  const handle = (partition: number, records: RawOffsetsRecord[]): Promise<void> => {
    expect(partition).toBe(7);
    handled.push(records);
    chunks += 1;
    log.push(`handle ${records.length}`);
    return Promise.resolve();
  };
  return { payload, handle, handled, log };
}

describe('handleInChunks', () => {
  it('hands a batch over in chunks, resolving and heartbeating after each', async () => {
    const { payload, handle, log } = fakeBatch(5, { lastOffset: 106 });
    await handleInChunks(payload, 2, handle);
    // The last chunk resolves the batch's last offset: 106, past two trailing transaction markers.
    expect(log).toEqual([
      'handle 2',
      'resolve 101',
      'heartbeat',
      'handle 2',
      'resolve 103',
      'heartbeat',
      'handle 1',
      'resolve 106',
      'heartbeat',
    ]);
  });

  it('stops between chunks once the partition was reassigned, resolving only what was handled', async () => {
    const { payload, handle, log } = fakeBatch(6, { staleAfterChunks: 1 });
    await handleInChunks(payload, 2, handle);
    expect(log).toEqual(['handle 2', 'resolve 101', 'heartbeat']);
  });

  it('hands over every record once, in order, never more than the chunk size at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 50 }),
        async (count, size) => {
          const { payload, handle, handled, log } = fakeBatch(count);
          await handleInChunks(payload, size, handle);
          expect(handled.every((chunk) => chunk.length > 0 && chunk.length <= size)).toBe(true);
          expect(handled.flat().map((r) => r.offset)).toEqual(
            Array.from({ length: count }, (_, i) => 100 + i),
          );
          const resolved = log.filter((l) => l.startsWith('resolve')).map((l) => Number(l.split(' ')[1]));
          expect(resolved).toEqual([...resolved].sort((a, b) => a - b));
          if (count > 0) expect(resolved.at(-1)).toBe(100 + count - 1);
        },
      ),
    );
  });
});

describe('consumerFailureCode', () => {
  it("reports a crash caused by the pipeline under the pipeline's code, not as an unreachable Kafka", () => {
    const unacknowledged = new OffsetSyncError('JetStream did not acknowledge 3 message(s)', {
      code: ErrorCodes.NATS_UNREACHABLE,
      cause: new Error('timeout'),
    });
    const crash = new KafkaJSNumberOfRetriesExceeded(unacknowledged, { retryCount: 5, retryTime: 800 });
    expect(consumerFailureCode(crash)).toBe(ErrorCodes.NATS_UNREACHABLE);
  });

  it("classifies kafkajs' own errors as the Kafka adapter does", () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:1');
    expect(consumerFailureCode(refused)).toBe(ErrorCodes.KAFKA_UNREACHABLE);
    expect(
      consumerFailureCode(new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 5, retryTime: 800 })),
    ).toBe(ErrorCodes.KAFKA_UNREACHABLE);
    const broker = new KafkaJSProtocolError(
      Object.assign(new Error('Not authorized to access group'), {
        type: 'GROUP_AUTHORIZATION_FAILED',
        code: 30,
        retriable: false,
      }),
    );
    expect(consumerFailureCode(broker)).toBe(ErrorCodes.NOT_AUTHORIZED);
  });

  it('names the resource and the ACL to grant when the group or topic is not authorized', () => {
    const denied = new KafkaJSProtocolError(
      Object.assign(new Error('Not authorized to access group'), {
        type: 'GROUP_AUTHORIZATION_FAILED',
        code: 30,
        retriable: false,
      }),
    );
    const wrapped = new KafkaJSNumberOfRetriesExceeded(denied, { retryCount: 5, retryTime: 800 });
    expect(
      classifyConsumerFailure(denied, { groupId: 'offsetsync-collector-src', topic: '__consumer_offsets' }),
    ).toMatchObject({
      code: ErrorCodes.NOT_AUTHORIZED,
      details: {
        resource: 'GROUP:offsetsync-collector-src',
        missingAcl: 'ALLOW READ on GROUP:offsetsync-collector-src',
      },
    });
    // Beneath kafkajs' exhausted retries too.
    expect(classifyConsumerFailure(wrapped, {}).code).toBe(ErrorCodes.NOT_AUTHORIZED);
  });

  it('reports anything else, a bug, as INTERNAL', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'offset')");
    // What kafkajs' retrier throws for an error it does not retry; its typings leave out the cause option.
    const NonRetriable = KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error;
    expect(consumerFailureCode(new NonRetriable(bug, { cause: bug }))).toBe(ErrorCodes.INTERNAL);
    expect(consumerFailureCode('a string')).toBe(ErrorCodes.INTERNAL);
  });
});
