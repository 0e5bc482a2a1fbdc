// Records from exact offsets, one Fetch per leader broker (minBytes 1, a short wait: exact records now,
// not a long poll), with what a consumer would see of them (protocol/record-selection.ts). Requests at
// nearby offsets of one partition share a read (shared-reads.ts). A request may name the leader epoch it
// takes for current: the leader then answers only at that epoch, and the answer says it was checked.
import type { OffsetSyncError } from '@offsetsync/contracts';
import type { ItemOutcome } from '../network/leader-routing.js';
import { sendVersionedRequest } from '../network/send-request.js';
import { selectRecords } from '../protocol/record-selection.js';
import { ISOLATION_CODES, type FetchArgs } from '../protocol/requests.js';
import type { FetchResponse } from '../protocol/responses.js';
import { groupByTopic, partitionKey } from '../protocol/topic-partitions.js';
import type { FetchAnswer, FetchRequest, IsolationLevel } from '../types.js';
import type { CallContext } from './call-context.js';
import { readShared } from './shared-reads.js';

const DEFAULT_PARTITION_FETCH_BYTES = 1024 * 1024;
const MAX_FETCH_RESPONSE_BYTES = 50 * 1024 * 1024;
const DEFAULT_FETCH_MAX_WAIT_MS = 10;
/** The first Fetch version that carries the reader's current leader epoch (KIP-320). */
const FIRST_LEADER_EPOCH_VERSION = 9;

/** Options of {@link fetchRecords}. */
export interface FetchOptions {
  /** Default `read_committed`. */
  isolation?: IsolationLevel;
  /** How long the broker may wait for data. Default `10`. */
  maxWaitMs?: number;
}

/**
 * Reads records from exact offsets; answers come in request order. The first round reads each partition
 * once from its lowest offset, a second round reads what the first did not reach with reads as wide as
 * the first ones turned out, and a last round gives each remaining offset its own read.
 */
export function fetchRecords(
  context: CallContext,
  requests: readonly FetchRequest[],
  options: FetchOptions = {},
): Promise<FetchAnswer[]> {
  return readShared(requests, (reads) => fetchEach(context, reads, options));
}

/** One round of reads: requests at the same partition are separate Fetches. */
async function fetchEach(
  context: CallContext,
  requests: readonly FetchRequest[],
  options: FetchOptions,
): Promise<FetchAnswer[]> {
  await context.ready();
  const isolation = options.isolation ?? 'read_committed';
  const maxWaitTime = options.maxWaitMs ?? DEFAULT_FETCH_MAX_WAIT_MS;
  const failed = (r: FetchRequest, error: OffsetSyncError): FetchAnswer => ({
    topic: r.topic,
    partition: r.partition,
    requestedOffset: r.offset,
    records: [],
    nextOffset: r.offset,
    highWatermark: -1,
    lastStableOffset: -1,
    logStartOffset: -1,
    error,
  });
  return context.leaders.perLeader('fetchRecords', requests, failed, async (broker, batch) => {
    const { version, response } = await sendVersionedRequest(
      broker,
      'Fetch',
      fetchArgs(batch, isolation, maxWaitTime),
    );
    return fetchOutcomes(response, batch, isolation, version >= FIRST_LEADER_EPOCH_VERSION);
  });
}

/** The Fetch request for one leader's batch: each partition's own maxBytes, their sum capped at 50 MiB. */
function fetchArgs(
  batch: readonly FetchRequest[],
  isolation: IsolationLevel,
  maxWaitTime: number,
): FetchArgs {
  const partitionBytes = (r: FetchRequest) => r.maxBytes ?? DEFAULT_PARTITION_FETCH_BYTES;
  const topics = [...groupByTopic(batch)].map(([topic, items]) => ({
    topic,
    partitions: items.map((r) => ({
      partition: r.partition,
      currentLeaderEpoch: r.currentLeaderEpoch ?? -1,
      fetchOffset: String(r.offset),
      maxBytes: partitionBytes(r),
    })),
  }));
  const total = batch.reduce((sum, r) => sum + partitionBytes(r), 0);
  return {
    replicaId: -1,
    isolationLevel: ISOLATION_CODES[isolation],
    maxWaitTime,
    minBytes: 1,
    maxBytes: Math.min(total, MAX_FETCH_RESPONSE_BYTES),
    topics,
    rackId: '',
  };
}

/** Each requested partition's answer or error code, by partition key; a top-level error is every one's. */
function fetchOutcomes(
  response: FetchResponse,
  batch: readonly FetchRequest[],
  isolation: IsolationLevel,
  epochChecked: boolean,
): Map<string, ItemOutcome<FetchAnswer>> {
  const byKey = new Map(batch.map((r) => [partitionKey(r), r]));
  const outcomes = new Map<string, ItemOutcome<FetchAnswer>>();
  if (response.errorCode !== undefined && response.errorCode !== 0) {
    for (const key of byKey.keys()) outcomes.set(key, { code: response.errorCode });
    return outcomes;
  }
  for (const { topicName: topic, partitions } of response.responses) {
    for (const p of partitions) {
      const key = partitionKey({ topic, partition: p.partition });
      const request = byKey.get(key);
      if (request === undefined) continue;
      if (p.errorCode !== 0) {
        outcomes.set(key, { code: p.errorCode });
        continue;
      }
      const { records, nextOffset } = selectRecords(p.messages, {
        requestedOffset: request.offset,
        isolation,
        abortedTransactions: p.abortedTransactions ?? [],
      });
      outcomes.set(key, {
        ok: {
          topic,
          partition: p.partition,
          requestedOffset: request.offset,
          records,
          nextOffset,
          highWatermark: Number(p.highWatermark),
          lastStableOffset: Number(p.lastStableOffset ?? -1),
          logStartOffset: Number(p.logStartOffset ?? p.lastStartOffset ?? -1),
          ...(epochChecked && request.currentLeaderEpoch !== undefined
            ? { leaderEpoch: request.currentLeaderEpoch }
            : {}),
        },
      });
    }
  }
  return outcomes;
}
