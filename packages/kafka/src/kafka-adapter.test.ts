import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { KafkaClusterConfig } from '@offsetsync/runtime';
import { ConfigError } from '@offsetsync/contracts';
import { createLogger } from '@offsetsync/runtime';
import {
  KafkaAdapter,
  kafkajsClientConfig,
  kafkajsInternals,
  laneOf,
  makeBrokerMetadataLenient,
  selectRecords,
  wavesOf,
  type DecodedRecord,
  type InternalBroker,
} from './kafka-adapter.js';

const { Kafka, logLevel } = kafkajs;
const silent = createLogger({ service: 'test', instanceId: 'test', level: 'silent' });

function clusterConfig(overrides: Partial<KafkaClusterConfig> = {}): KafkaClusterConfig {
  return {
    bootstrapServers: ['127.0.0.1:1'],
    connectionTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    ...overrides,
  };
}

describe('kafkajs internals the adapter relies on', () => {
  // When this fails after a kafkajs upgrade: re-read src/index.js (the private cluster factory),
  // src/cluster/index.js, src/broker/index.js (lookupRequest, connectionPool.send), the request
  // definitions and decoders under src/protocol/requests, and update kafka-adapter.ts, then this pin.
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

describe('makeBrokerMetadataLenient', () => {
  /** A broker whose Metadata answer names a partition without a leader; kafkajs' parser would throw. */
  function fakeBroker(): InternalBroker & { sent: string[] } {
    const answer = {
      brokers: [{ nodeId: 1, host: 'h', port: 1 }],
      topicMetadata: [
        {
          topicErrorCode: 0,
          topic: 'a',
          partitionMetadata: [{ partitionErrorCode: 5, partitionId: 0, leader: -1 }],
        },
      ],
    };
    const broker = {
      sent: [] as string[],
      connectionPool: {
        host: 'h',
        port: 1,
        send: async (r: {
          request: { apiName: string };
          response: { decode(b: Buffer): Promise<unknown>; parse(d: unknown): Promise<unknown> };
        }) => {
          broker.sent.push(r.request.apiName);
          return r.response.parse(await r.response.decode(Buffer.alloc(0)));
        },
      },
      lookupRequest: () => () => ({
        request: { apiKey: 3, apiName: 'Metadata', apiVersion: 6 },
        response: {
          decode: () => Promise.resolve(answer),
          parse: () => Promise.reject(new Error('LEADER_NOT_AVAILABLE')), // kafkajs' strict parser
        },
      }),
      metadata: () => Promise.reject(new Error('LEADER_NOT_AVAILABLE')),
      disconnect: () => Promise.resolve(),
    };
    return broker;
  }

  it("replaces every pooled broker's strict metadata call by one that keeps partition errors", async () => {
    const seed = fakeBroker();
    const other = fakeBroker();
    makeBrokerMetadataLenient({ seedBroker: seed, brokers: { 2: other } });
    for (const broker of [seed, other]) {
      await expect(broker.metadata(['a'])).resolves.toMatchObject({
        topicMetadata: [{ topic: 'a', partitionMetadata: [{ partitionErrorCode: 5, leader: -1 }] }],
      });
      expect(broker.sent).toEqual(['Metadata']);
    }
    const patched = seed.metadata;
    makeBrokerMetadataLenient({ seedBroker: seed, brokers: {} });
    expect(seed.metadata).toBe(patched);
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

describe('KafkaAdapter lifecycle', () => {
  it('does not connect when constructed, and rejects every call after disconnect', async () => {
    const adapter = new KafkaAdapter({ cluster: clusterConfig(), clientId: 'test', logger: silent });
    const first = adapter.disconnect();
    expect(adapter.disconnect()).toBe(first);
    await first;
    await expect(adapter.connect()).rejects.toMatchObject({ code: 'LIFECYCLE' });
    await expect(
      adapter.listOffsets([{ topic: 't', partition: 0, timestamp: 'latest' }]),
    ).rejects.toMatchObject({
      code: 'LIFECYCLE',
    });
  });
});

// --- selectRecords --------------------------------------------------------------------------------

type Control = 'ABORT' | 'COMMIT';

/** The records kafkajs would decode from one batch. */
function batch(
  firstOffset: number,
  count: number,
  options: { producerId?: number; transactional?: boolean; control?: Control; logAppendTime?: boolean } = {},
): DecodedRecord[] {
  const context = {
    firstOffset: String(firstOffset),
    lastOffsetDelta: count - 1,
    producerId: String(options.producerId ?? -1),
    inTransaction: options.transactional ?? options.control !== undefined,
    isControlBatch: options.control !== undefined,
    timestampType: options.logAppendTime === true ? 1 : 0,
  };
  return Array.from({ length: count }, (_, i) => ({
    offset: String(firstOffset + i),
    timestamp: String(1_000 + firstOffset + i),
    key: options.control === undefined ? Buffer.from(`k${firstOffset + i}`) : controlKey(options.control),
    value: options.control === undefined ? Buffer.from('v') : Buffer.alloc(6),
    headers: {},
    isControlRecord: options.control !== undefined,
    batchContext: context,
  }));
}

function controlKey(type: Control): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(type === 'ABORT' ? 0 : 1, 2);
  return key;
}

const offsetsOf = (result: { records: { offset: number }[] }) => result.records.map((r) => r.offset);

describe('selectRecords', () => {
  it('drops the records of the first batch that lie before the requested offset', () => {
    const result = selectRecords([...batch(0, 5), ...batch(5, 2)], {
      requestedOffset: 3,
      isolation: 'read_committed',
      abortedTransactions: [],
    });
    expect(offsetsOf(result)).toEqual([3, 4, 5, 6]);
    expect(result.nextOffset).toBe(7);
    expect(result.records[0]).toMatchObject({ timestampMs: 1_003, timestampType: 'create-time' });
    expect(result.records[0]?.key?.toString()).toBe('k3');
  });

  it('skips aborted transactions and control batches under read_committed', () => {
    const messages = [
      ...batch(0, 2, { producerId: 8, transactional: true }),
      ...batch(2, 1, { producerId: 8, control: 'COMMIT' }),
      ...batch(3, 3, { producerId: 7, transactional: true }),
      ...batch(6, 1, { producerId: 7, control: 'ABORT' }),
      ...batch(7, 1),
    ];
    const aborted = [{ producerId: '7', firstOffset: '3' }];
    const committed = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: aborted,
    });
    expect(offsetsOf(committed)).toEqual([0, 1, 7]);
    expect(committed.nextOffset).toBe(8);
    const all = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_uncommitted',
      abortedTransactions: aborted,
    });
    expect(offsetsOf(all)).toEqual([0, 1, 3, 4, 5, 7]);
  });

  it('keeps a committed transaction interleaved with an aborted one of another producer', () => {
    const messages = [
      ...batch(0, 2, { producerId: 1, transactional: true }),
      ...batch(2, 2, { producerId: 2, transactional: true }),
      ...batch(4, 1, { producerId: 1, transactional: true }),
      ...batch(5, 1, { producerId: 1, control: 'ABORT' }),
      ...batch(6, 1, { producerId: 2, control: 'COMMIT' }),
    ];
    const result = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [{ producerId: '1', firstOffset: '0' }],
    });
    expect(offsetsOf(result)).toEqual([2, 3]);
  });

  it('reads a producer again after its abort marker', () => {
    const messages = [
      ...batch(0, 2, { producerId: 1, transactional: true }),
      ...batch(2, 1, { producerId: 1, control: 'ABORT' }),
      ...batch(3, 2, { producerId: 1, transactional: true }),
      ...batch(5, 1, { producerId: 1, control: 'COMMIT' }),
    ];
    const result = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [{ producerId: '1', firstOffset: '0' }],
    });
    expect(offsetsOf(result)).toEqual([3, 4]);
    expect(result.nextOffset).toBe(6);
  });

  it('reports log-append time, and the timestamp type of legacy message sets', () => {
    const [appended] = selectRecords(batch(0, 1, { logAppendTime: true }), {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [],
    }).records;
    expect(appended?.timestampType).toBe('log-append-time');
    const legacy: DecodedRecord[] = [
      { offset: '0', timestamp: '5', key: null, value: null, attributes: 0x08 },
      { offset: '1', timestamp: '6', key: null, value: Buffer.from('x'), attributes: 0 },
    ];
    const result = selectRecords(legacy, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [],
    });
    expect(result.records.map((r) => r.timestampType)).toEqual(['log-append-time', 'create-time']);
    expect(result.records[0]).toMatchObject({ key: null, value: null, headers: {} });
    expect(result.nextOffset).toBe(2);
  });

  it('answers the requested offset as next offset when nothing came back', () => {
    expect(
      selectRecords([], { requestedOffset: 42, isolation: 'read_committed', abortedTransactions: [] }),
    ).toEqual({
      records: [],
      nextOffset: 42,
    });
  });

  // A model of a partition log written by transactional and plain producers, and of what a broker sends
  // for a fetch: the batches from the one holding the fetch offset on, and the aborted transactions
  // whose marker is at or after the fetch offset. read_committed must show exactly the records of
  // committed transactions and of plain producers.
  it('shows exactly the committed and non-transactional records (model-based)', () => {
    const step = fc.record({
      producer: fc.integer({ min: 0, max: 1 }),
      kind: fc.constantFrom('data', 'data', 'end', 'plain'),
      commit: fc.boolean(),
      size: fc.integer({ min: 1, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), fc.nat(), (steps, fetchSeed) => {
        const log: DecodedRecord[][] = [];
        const visible = new Set<number>();
        const aborted: { producerId: string; firstOffset: number; markerOffset: number }[] = [];
        const open = new Map<number, { firstOffset: number; offsets: number[] }>();
        let next = 0;
        const end = (producer: number, commit: boolean) => {
          const txn = open.get(producer);
          if (txn === undefined) return;
          log.push(batch(next, 1, { producerId: producer, control: commit ? 'COMMIT' : 'ABORT' }));
          if (commit) txn.offsets.forEach((o) => visible.add(o));
          else
            aborted.push({ producerId: String(producer), firstOffset: txn.firstOffset, markerOffset: next });
          open.delete(producer);
          next += 1;
        };
        for (const s of steps) {
          if (s.kind === 'plain') {
            log.push(batch(next, s.size));
            for (let i = 0; i < s.size; i += 1) visible.add(next + i);
          } else if (s.kind === 'data') {
            const txn = open.get(s.producer) ?? { firstOffset: next, offsets: [] };
            open.set(s.producer, txn);
            log.push(batch(next, s.size, { producerId: s.producer, transactional: true }));
            for (let i = 0; i < s.size; i += 1) txn.offsets.push(next + i);
          } else {
            end(s.producer, s.commit);
            continue;
          }
          next += s.size;
        }
        for (const producer of [...open.keys()]) end(producer, fetchSeed % 2 === 0);

        const requestedOffset = fetchSeed % (next + 1);
        const sent = log.filter((b) => {
          const last = b[b.length - 1];
          return last !== undefined && Number(last.offset) >= requestedOffset;
        });
        const result = selectRecords(sent.flat(), {
          requestedOffset,
          isolation: 'read_committed',
          abortedTransactions: aborted
            .filter((a) => a.markerOffset >= requestedOffset)
            .map((a) => ({ producerId: a.producerId, firstOffset: String(a.firstOffset) })),
        });
        const expected = [...visible].filter((o) => o >= requestedOffset).sort((a, b) => a - b);
        expect(offsetsOf(result)).toEqual(expected);
        expect(result.nextOffset).toBe(Math.max(next, requestedOffset));
      }),
      { numRuns: 500 },
    );
  });
});

describe('wavesOf', () => {
  it('puts each repeat of a partition into a later wave, keeping input order', () => {
    const items = [
      { topic: 'a', partition: 0 },
      { topic: 'a', partition: 1 },
      { topic: 'a', partition: 0 },
      { topic: 'b', partition: 0 },
      { topic: 'a', partition: 0 },
    ];
    expect(wavesOf(items)).toEqual([[0, 1, 3], [2], [4]]);
    expect(wavesOf([])).toEqual([]);
  });
});

// --- client configuration -----------------------------------------------------------------------

describe('laneOf', () => {
  it('puts every group on one lane within range, the same one each time', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 64 }), (group, lanes) => {
        const lane = laneOf(group, lanes);
        expect(Number.isInteger(lane) && lane >= 0 && lane < lanes).toBe(true);
        expect(laneOf(group, lanes)).toBe(lane);
      }),
    );
  });

  it('spreads similar group names over the lanes', () => {
    const used = new Set(Array.from({ length: 100 }, (_, i) => laneOf(`group-${i}`, 8)));
    expect(used.size).toBe(8);
  });
});

describe('kafkajsClientConfig', () => {
  it('passes bootstrap servers, client id and timeouts', () => {
    const config = kafkajsClientConfig(
      clusterConfig({
        bootstrapServers: ['a:9092', 'b:9092'],
        connectionTimeoutMs: 1234,
        requestTimeoutMs: 5678,
      }),
      'client-1',
      silent,
    );
    expect(config).toMatchObject({
      clientId: 'client-1',
      brokers: ['a:9092', 'b:9092'],
      connectionTimeout: 1234,
      requestTimeout: 5678,
      logLevel: logLevel.WARN,
    });
    expect(config.ssl).toBeUndefined();
    expect(config.sasl).toBeUndefined();
  });

  it('reads the TLS files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'offsetsync-tls-'));
    for (const name of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, name), `-- ${name} --`);
    const config = kafkajsClientConfig(
      clusterConfig({
        tls: {
          enabled: true,
          caFile: join(dir, 'ca.pem'),
          certFile: join(dir, 'cert.pem'),
          keyFile: join(dir, 'key.pem'),
          rejectUnauthorized: false,
        },
      }),
      'c',
      silent,
    );
    expect(config.ssl).toEqual({
      rejectUnauthorized: false,
      ca: [Buffer.from('-- ca.pem --')],
      cert: Buffer.from('-- cert.pem --'),
      key: Buffer.from('-- key.pem --'),
    });
  });

  it('uses the system trust store when TLS is on without files, and plain TCP when it is off', () => {
    expect(
      kafkajsClientConfig(clusterConfig({ tls: { enabled: true, rejectUnauthorized: true } }), 'c', silent)
        .ssl,
    ).toEqual({ rejectUnauthorized: true });
    expect(
      kafkajsClientConfig(clusterConfig({ tls: { enabled: false, rejectUnauthorized: true } }), 'c', silent)
        .ssl,
    ).toBeUndefined();
  });

  it('reports every unreadable TLS file at once', () => {
    const tls = {
      enabled: true,
      caFile: '/nonexistent/ca.pem',
      keyFile: '/nonexistent/key.pem',
      rejectUnauthorized: true,
    };
    let thrown: unknown;
    try {
      kafkajsClientConfig(clusterConfig({ tls }), 'c', silent);
    } catch (e: unknown) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems.map((p) => p.path)).toEqual(['tls.caFile', 'tls.keyFile']);
  });

  it.each(['plain', 'scram-sha-256', 'scram-sha-512'] as const)('passes SASL %s', (mechanism) => {
    const config = kafkajsClientConfig(
      clusterConfig({ sasl: { mechanism, username: 'u', password: 'p' } }),
      'c',
      silent,
    );
    expect(config.sasl).toEqual({ mechanism, username: 'u', password: 'p' });
  });

  it('routes kafkajs errors and warnings to the logger', () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ service: 'test', instanceId: 'i', level: 'info', destination });
    const { logCreator } = kafkajsClientConfig(clusterConfig(), 'c', logger);
    const log = logCreator?.(logLevel.WARN);
    const timestamp = new Date().toISOString();
    log?.({
      namespace: 'Connection',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp, logger: 'kafkajs', message: 'Response Metadata failed', broker: 'b:1' },
    });
    log?.({
      namespace: 'Cluster',
      level: logLevel.WARN,
      label: 'WARN',
      log: { timestamp, logger: 'kafkajs', message: 'slow' },
    });
    expect(lines).toMatchObject([
      {
        level: 'error',
        msg: 'Response Metadata failed',
        component: 'kafkajs',
        namespace: 'Connection',
        broker: 'b:1',
      },
      { level: 'warn', msg: 'slow', component: 'kafkajs', namespace: 'Cluster' },
    ]);
  });
});
