import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type StreamConfig,
} from 'nats';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { Names } from '@offsetsync/contracts';

/** What offsetsync needs of a stream. Only these fields are compared and corrected on start-up. */
export interface StreamSpec {
  name: string;
  subjects: string[];
  /** 1 makes the stream hold the latest event per key: the current state, readable by any newcomer. */
  maxMsgsPerSubject: number;
  /** Window in which a repeated Nats-Msg-Id is dropped as a duplicate. */
  duplicateWindowMs: number;
  /** 0 keeps messages for ever. */
  maxAgeMs: number;
  replicas: number;
}

/**
 * The streams every offsetsync installation uses. Each keeps the last event per subject (per group
 * partition, per link): a compacted event log whose contents are the current state.
 */
export function streamSpecs(names: Names, replicas: number): StreamSpec[] {
  const common = { maxMsgsPerSubject: 1, duplicateWindowMs: 120_000, maxAgeMs: 0, replicas };
  return [
    { ...common, name: names.stream('committed'), subjects: [names.streamFilter('committed')] },
    { ...common, name: names.stream('translated'), subjects: [names.streamFilter('translated')] },
    { ...common, name: names.stream('applied'), subjects: [names.streamFilter('applied')] },
    // A heartbeat older than a day says nothing about what runs now.
    {
      ...common,
      name: names.stream('heartbeats'),
      subjects: [names.streamFilter('heartbeats')],
      maxAgeMs: 86_400_000,
    },
  ];
}

export type ProvisionAction = 'created' | 'updated' | 'unchanged';

function toStreamConfig(spec: StreamSpec): Partial<StreamConfig> {
  return {
    name: spec.name,
    subjects: spec.subjects,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_msgs_per_subject: spec.maxMsgsPerSubject,
    duplicate_window: nanos(spec.duplicateWindowMs),
    max_age: nanos(spec.maxAgeMs),
    num_replicas: spec.replicas,
  };
}

function streamDiffers(current: StreamConfig, wanted: Partial<StreamConfig>): boolean {
  return (
    JSON.stringify([...current.subjects].sort()) !== JSON.stringify([...(wanted.subjects ?? [])].sort()) ||
    current.max_msgs_per_subject !== wanted.max_msgs_per_subject ||
    current.duplicate_window !== wanted.duplicate_window ||
    current.max_age !== wanted.max_age ||
    current.num_replicas !== wanted.num_replicas
  );
}

function isNotFound(error: unknown): boolean {
  // nats.js reports JetStream API errors with the server's numeric error code.
  const api = (error as { api_error?: { err_code?: number } }).api_error;
  return api?.err_code === 10059 || api?.err_code === 10014 || (error as { code?: string }).code === '404';
}

/** Creates each stream that is missing and corrects those whose managed fields differ. Idempotent. */
export async function provisionStreams(
  jsm: JetStreamManager,
  specs: readonly StreamSpec[],
): Promise<Record<string, ProvisionAction>> {
  const actions: Record<string, ProvisionAction> = {};
  for (const spec of specs) {
    const wanted = toStreamConfig(spec);
    try {
      let current: StreamConfig | undefined;
      try {
        current = (await jsm.streams.info(spec.name)).config;
      } catch (error: unknown) {
        if (!isNotFound(error)) throw error;
      }
      if (current === undefined) {
        await jsm.streams.add(wanted);
        actions[spec.name] = 'created';
      } else if (streamDiffers(current, wanted)) {
        await jsm.streams.update(spec.name, { ...current, ...wanted });
        actions[spec.name] = 'updated';
      } else {
        actions[spec.name] = 'unchanged';
      }
    } catch (error: unknown) {
      throw new OffsetSyncError(`could not provision stream ${spec.name}`, {
        code: ErrorCodes.NATS_PROVISIONING,
        retryable: true,
        cause: error,
      });
    }
  }
  return actions;
}

/** A durable pull consumer shared by every instance of one service for one link. */
export interface DurableConsumerSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /** How long the server waits for an ack before redelivering. */
  ackWaitMs: number;
  /** Messages handed out and not yet acknowledged, across all instances. */
  maxAckPending: number;
}

/** Creates the durable consumer when missing and corrects its ack wait and ack-pending limit. Idempotent. */
export async function provisionDurableConsumer(
  jsm: JetStreamManager,
  spec: DurableConsumerSpec,
): Promise<ProvisionAction> {
  const wanted: Partial<ConsumerConfig> = {
    durable_name: spec.durable,
    filter_subject: spec.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(spec.ackWaitMs),
    max_ack_pending: spec.maxAckPending,
  };
  try {
    let current: ConsumerConfig | undefined;
    try {
      current = (await jsm.consumers.info(spec.stream, spec.durable)).config;
    } catch (error: unknown) {
      if (!isNotFound(error)) throw error;
    }
    if (current === undefined) {
      await jsm.consumers.add(spec.stream, wanted);
      return 'created';
    }
    if (current.filter_subject !== spec.filterSubject) {
      throw new OffsetSyncError(
        `consumer ${spec.durable} on ${spec.stream} filters '${current.filter_subject ?? ''}', not '${spec.filterSubject}'; delete it to change its filter`,
        {
          code: ErrorCodes.NATS_PROVISIONING,
          retryable: false,
        },
      );
    }
    if (current.ack_wait !== wanted.ack_wait || current.max_ack_pending !== wanted.max_ack_pending) {
      await jsm.consumers.update(spec.stream, spec.durable, {
        ack_wait: wanted.ack_wait,
        max_ack_pending: wanted.max_ack_pending,
      });
      return 'updated';
    }
    return 'unchanged';
  } catch (error: unknown) {
    if (error instanceof OffsetSyncError) throw error;
    throw new OffsetSyncError(`could not provision consumer ${spec.durable} on ${spec.stream}`, {
      code: ErrorCodes.NATS_PROVISIONING,
      retryable: true,
      cause: error,
    });
  }
}

/** Opens a KV bucket that keeps one value per key, creating it when missing. */
export async function provisionKvBucket(js: JetStreamClient, name: string, replicas: number): Promise<KV> {
  try {
    return await js.views.kv(name, { history: 1, replicas });
  } catch (error: unknown) {
    throw new OffsetSyncError(`could not provision KV bucket ${name}`, {
      code: ErrorCodes.NATS_PROVISIONING,
      retryable: true,
      cause: error,
    });
  }
}

/** How a service finds its streams, consumers and buckets: `create` them when missing, or only `verify`. */
export type ProvisioningMode = 'create' | 'verify';

function missing(what: string): OffsetSyncError {
  return new OffsetSyncError(
    `${what} does not exist: run \`offsetsync provision\` (with NATS admin rights) first`,
    {
      code: ErrorCodes.NATS_PROVISIONING,
      retryable: false,
    },
  );
}

/**
 * Checks that every stream exists (read-only: needs `$JS.API.STREAM.INFO.<stream>` only). Returns the
 * streams whose managed fields differ from `specs` (used as they are; `offsetsync provision` corrects
 * them); throws NATS_PROVISIONING for a missing one.
 */
export async function verifyStreams(jsm: JetStreamManager, specs: readonly StreamSpec[]): Promise<string[]> {
  const differing: string[] = [];
  for (const spec of specs) {
    let current: StreamConfig;
    try {
      current = (await jsm.streams.info(spec.name)).config;
    } catch (error: unknown) {
      if (isNotFound(error)) throw missing(`stream ${spec.name}`);
      throw new OffsetSyncError(`could not read stream ${spec.name}`, {
        code: ErrorCodes.NATS_PROVISIONING,
        retryable: true,
        cause: error,
      });
    }
    if (streamDiffers(current, toStreamConfig(spec))) differing.push(spec.name);
  }
  return differing;
}

/**
 * Checks that the durable consumer exists with the expected filter (read-only: `CONSUMER.INFO`). Returns
 * whether its ack wait or ack-pending limit differ from `spec` (it is used as it is).
 */
export async function verifyDurableConsumer(
  jsm: JetStreamManager,
  spec: DurableConsumerSpec,
): Promise<'unchanged' | 'differs'> {
  let current: ConsumerConfig;
  try {
    current = (await jsm.consumers.info(spec.stream, spec.durable)).config;
  } catch (error: unknown) {
    if (isNotFound(error)) throw missing(`consumer ${spec.durable} on ${spec.stream}`);
    throw new OffsetSyncError(`could not read consumer ${spec.durable} on ${spec.stream}`, {
      code: ErrorCodes.NATS_PROVISIONING,
      retryable: true,
      cause: error,
    });
  }
  if (current.filter_subject !== spec.filterSubject) {
    throw new OffsetSyncError(
      `consumer ${spec.durable} on ${spec.stream} filters '${current.filter_subject ?? ''}', not '${spec.filterSubject}'; run \`offsetsync provision\``,
      { code: ErrorCodes.NATS_PROVISIONING, retryable: false },
    );
  }
  const differs =
    current.ack_wait !== nanos(spec.ackWaitMs) || current.max_ack_pending !== spec.maxAckPending;
  return differs ? 'differs' : 'unchanged';
}

/** Checks that the KV bucket exists (read-only: the info of its stream `KV_<name>`). */
export async function verifyKvBucket(jsm: JetStreamManager, name: string): Promise<void> {
  try {
    await jsm.streams.info(`KV_${name}`);
  } catch (error: unknown) {
    if (isNotFound(error)) throw missing(`KV bucket ${name}`);
    throw new OffsetSyncError(`could not read KV bucket ${name}`, {
      code: ErrorCodes.NATS_PROVISIONING,
      retryable: true,
      cause: error,
    });
  }
}
