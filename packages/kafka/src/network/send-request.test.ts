import { describe, expect, it } from 'vitest';
import type { InternalBroker } from '../protocol/kafkajs-internals.js';
import { makeBrokerMetadataLenient } from './send-request.js';

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
        getConnection: () => Promise.resolve({}),
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
