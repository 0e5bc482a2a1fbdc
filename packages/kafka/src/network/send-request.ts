// Sends one request through a kafkajs broker's connection pool with kafkajs' own encoder and decoder for
// the best version both sides support, but without kafkajs' parser, so every partition's error code
// reaches the caller. The same lenient Metadata call replaces the pooled brokers' own, so that one
// leaderless partition somewhere in the cluster cannot stop kafkajs from learning the broker list.
import { checkBroker, kafkajsInternals } from '../protocol/kafkajs-internals.js';
import type { InternalBroker, InternalBrokerPool, ProtocolResponse } from '../protocol/kafkajs-internals.js';
import type { ApiName, ApiShapes } from '../protocol/requests.js';

/** Raised by the adapter's decoder wrapper: the response arrived but could not be decoded. */
export class ResponseDecodeError extends Error {}

/**
 * Sends one request of `api` to `broker` and resolves with the decoded, unparsed response. A closed
 * connection is dropped (what kafkajs' Broker does for its own requests), so the next use reconnects;
 * the error is rethrown either way.
 */
export async function sendRequest<A extends ApiName>(
  broker: InternalBroker,
  api: A,
  args: ApiShapes[A]['args'],
): Promise<ApiShapes[A]['response']> {
  const { apiKey, definition } = kafkajsInternals().apis[api];
  const built = checkBroker(broker).lookupRequest(apiKey, definition)(args);
  const response: ProtocolResponse = {
    decode: async (raw) => {
      try {
        return await built.response.decode(raw);
      } catch (cause: unknown) {
        throw new ResponseDecodeError(`cannot decode ${api} response`, { cause });
      }
    },
    parse: (decoded) => Promise.resolve(decoded),
  };
  try {
    return (await broker.connectionPool.send({
      request: built.request,
      response,
      ...(built.requestTimeout === undefined ? {} : { requestTimeout: built.requestTimeout }),
    })) as ApiShapes[A]['response'];
  } catch (error: unknown) {
    if (error instanceof Error && error.name === 'KafkaJSConnectionClosedError') await broker.disconnect();
    throw error;
  }
}

const lenientBrokers = new WeakSet<InternalBroker>();

/**
 * kafkajs learns the cluster's brokers from a Metadata request for every topic and throws when any
 * partition anywhere reports an error (a partition without a leader while a broker is down), which would
 * keep the adapter from connecting to a cluster that is mostly healthy. The brokers of the adapter's own
 * pool therefore send Metadata without kafkajs' strict parser; the adapter reads topic errors itself.
 * Brokers the pool creates later are covered by the next call.
 */
export function makeBrokerMetadataLenient(pool: InternalBrokerPool): void {
  for (const broker of [pool.seedBroker, ...Object.values(pool.brokers)]) {
    if (broker === undefined || lenientBrokers.has(broker)) continue;
    broker.metadata = (topics) => sendRequest(broker, 'Metadata', { topics, allowAutoTopicCreation: false });
    lenientBrokers.add(broker);
  }
}
