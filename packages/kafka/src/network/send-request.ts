// Sends one request through a kafkajs broker's connection pool with kafkajs' own encoder and decoder for
// the best version both sides support, but without kafkajs' parser, so every partition's error code
// reaches the caller. The same lenient Metadata call replaces the pooled brokers' own, so that one
// leaderless partition somewhere in the cluster cannot stop kafkajs from learning the broker list.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { decodeFlexibleResponse, encodeFlexibleRequest, type FlexibleApi } from '../protocol/flexible-api.js';
import { checkBroker, kafkajsInternals } from '../protocol/kafkajs-internals.js';
import type {
  InternalBroker,
  InternalBrokerPool,
  ProtocolRequest,
  ProtocolResponse,
} from '../protocol/kafkajs-internals.js';
import type { ApiName, ApiShapes } from '../protocol/requests.js';
import { shareConnectionAttempts } from './connection-attempts.js';

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
  return (await sendVersionedRequest(broker, api, args)).response;
}

/**
 * {@link sendRequest}, with the version kafkajs chose: fields of newer versions (a Fetch's current leader
 * epoch, from v9) reach the broker only when that version carries them.
 */
export async function sendVersionedRequest<A extends ApiName>(
  broker: InternalBroker,
  api: A,
  args: ApiShapes[A]['args'],
): Promise<{ version: number; response: ApiShapes[A]['response'] }> {
  const { apiKey, definition } = kafkajsInternals().apis[api];
  const built = checkBroker(broker).lookupRequest(apiKey, definition)(args);
  const response = (await send(broker, api, built)) as ApiShapes[A]['response'];
  return { version: built.request.apiVersion, response };
}

/**
 * Sends one request of an API this package encodes itself (protocol/flexible-api.ts), at the highest
 * version both it and the broker implement, and resolves with the decoded response and that version.
 * Rejects with `KAFKA_UNSUPPORTED` (not retryable) when the broker offers none of those versions.
 */
export async function sendFlexibleRequest<A, R>(
  broker: InternalBroker,
  api: FlexibleApi<A, R>,
  args: A,
): Promise<{ version: number; response: R }> {
  const version = flexibleVersion(broker, api);
  const request: ProtocolRequest = {
    request: {
      apiKey: api.apiKey,
      apiName: api.name,
      apiVersion: version,
      encode: () => Promise.resolve(kafkajsInternals().encoderOf(encodeFlexibleRequest(api, version, args))),
    },
    response: {
      decode: (raw) => Promise.resolve(decodeFlexibleResponse(api, version, raw)),
      parse: (decoded) => Promise.resolve(decoded),
    },
  };
  return { version, response: (await send(broker, api.name, request)) as R };
}

/** The highest version of `api` that the broker and this package both implement. */
function flexibleVersion(broker: InternalBroker, api: FlexibleApi<never, unknown>): number {
  let chosen: number | undefined;
  const definition = {
    versions: api.versions.map(String),
    // kafkajs' lookup picks min(highest implemented, broker's highest) and asks the protocol for it.
    protocol: ({ version }: { version: number }) => {
      chosen = version;
      return () => undefined;
    },
  };
  try {
    checkBroker(broker).lookupRequest(api.apiKey, definition);
  } catch (error: unknown) {
    if (!(error instanceof Error && error.name === 'KafkaJSServerDoesNotSupportApiKey')) throw error;
  }
  if (chosen === undefined || !api.versions.includes(chosen)) {
    throw new OffsetSyncError(
      `the broker does not offer ${api.name} v${api.versions[0]}-${api.versions.at(-1)}` +
        (chosen === undefined ? '' : ` (its highest is v${chosen})`),
      {
        code: ErrorCodes.KAFKA_UNSUPPORTED,
        retryable: false,
        details: { api: api.name, apiKey: api.apiKey },
      },
    );
  }
  return chosen;
}

/** Sends a built request without kafkajs' parser, dropping a connection that closed. */
async function send(broker: InternalBroker, api: string, built: ProtocolRequest): Promise<unknown> {
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
  shareConnectionAttempts(broker.connectionPool);
  try {
    return await broker.connectionPool.send({
      request: built.request,
      response,
      ...(built.requestTimeout === undefined ? {} : { requestTimeout: built.requestTimeout }),
    });
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
    if (broker === undefined) continue;
    // kafkajs' own requests (ApiVersions, FindCoordinator) connect through the same pool.
    shareConnectionAttempts(checkBroker(broker).connectionPool);
    if (lenientBrokers.has(broker)) continue;
    broker.metadata = (topics) => sendRequest(broker, 'Metadata', { topics, allowAutoTopicCreation: false });
    lenientBrokers.add(broker);
  }
}
