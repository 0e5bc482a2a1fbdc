import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkajsInternals } from './kafkajs-internals.js';

const { Kafka, logLevel } = kafkajs;

describe('kafkajs internals the adapter relies on', () => {
  // When this fails after a kafkajs upgrade: re-read src/index.js (the private cluster factory),
  // src/cluster/index.js, src/broker/index.js (lookupRequest, connectionPool.send), the request
  // definitions and decoders under src/protocol/requests, and update kafkajs-internals.ts and the
  // shapes in requests.ts and responses.ts, then this pin.
  it('are those of kafkajs 2.2.4', () => {
    expect(kafkajsInternals().version).toBe('2.2.4');
  });

  it('give a Cluster through the private factory of a Kafka instance', () => {
    const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
    const cluster = kafkajsInternals().createCluster(kafka, {
      allowAutoTopicCreation: false,
      metadataMaxAge: 1_000,
      maxInFlightRequests: null,
      instrumentationEmitter: { emit: () => undefined },
    });
    expect(cluster.getNodeIds()).toEqual([]);
  });

  it('give Brokers with the methods the adapter calls or replaces', () => {
    const Broker = createRequire(import.meta.url)('kafkajs/src/broker/index.js') as {
      prototype: Record<string, unknown>;
    };
    expect(typeof Broker.prototype.metadata).toBe('function');
    expect(typeof Broker.prototype.disconnect).toBe('function');
    // lookupRequest and connectionPool are set per instance; the integration tests use them.
  });

  it('give ConnectionPools that connect through getConnection, whose connects the adapter shares', () => {
    const ConnectionPool = createRequire(import.meta.url)('kafkajs/src/network/connectionPool.js') as {
      prototype: Record<string, unknown>;
    };
    expect(typeof ConnectionPool.prototype.getConnection).toBe('function');
    expect(typeof ConnectionPool.prototype.send).toBe('function');
  });

  it('give the request definitions and API keys used', () => {
    const { apis } = kafkajsInternals();
    expect(Object.fromEntries(Object.entries(apis).map(([name, api]) => [name, api.apiKey]))).toEqual({
      Metadata: 3,
      ListOffsets: 2,
      Fetch: 1,
      OffsetCommit: 8,
      OffsetFetch: 9,
      DescribeGroups: 15,
    });
  });

  it('wrap bytes in the Encoder that a request encode() must return', () => {
    const encoder = kafkajsInternals().encoderOf(Buffer.from([1, 2, 3])) as { buffer: Buffer };
    expect(encoder.buffer).toEqual(Buffer.from([1, 2, 3]));
  });

  it('turn a protocol error code into an error with its type and retriability', () => {
    const error = kafkajsInternals().createErrorFromCode(25) as Error & {
      type?: string;
      retriable?: boolean;
    };
    expect(error).toMatchObject({ type: 'UNKNOWN_MEMBER_ID', retriable: false });
  });

  it('decode the Fetch v11 log start offset under the misspelt name the adapter reads', async () => {
    const definition = kafkajsInternals().apis.Fetch.definition as {
      protocol(o: { version: number }): (args: Record<string, unknown>) => {
        response: {
          decode(raw: Buffer): Promise<{ responses: { partitions: Record<string, unknown>[] }[] }>;
        };
      };
    };
    const { response } = definition.protocol({ version: 11 })({ topics: [] });
    const topic = Buffer.from('t');
    const raw = Buffer.concat([
      int32(0), // throttle time
      int16(0), // error code
      int32(0), // session id
      int32(1), // one topic
      int16(topic.length),
      topic,
      int32(1), // one partition
      int32(0), // partition
      int16(0), // error code
      int64(5), // high watermark
      int64(5), // last stable offset
      int64(3), // log start offset
      int32(0), // no aborted transactions
      int32(-1), // preferred read replica
      int32(0), // no records
    ]);
    const decoded = await response.decode(raw);
    expect(decoded.responses[0]?.partitions[0]).toMatchObject({ lastStartOffset: '3', highWatermark: '5' });
  });
});

function int16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
}
function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
function int64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}
