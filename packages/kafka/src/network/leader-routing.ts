// The skeleton of every partition-level call (ListOffsets, Fetch): look up leaders, send one request per
// leader broker in parallel, then look leaders up again for the partitions whose leader moved (or whose
// broker could not be reached) and retry those once. Partition-level failures become answers, never
// rejections.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes, toOffsetSyncError } from '../kafka-errors.js';
import { brokerError, missingError } from '../protocol/broker-errors.js';
import type { InternalBroker } from '../protocol/kafkajs-internals.js';
import { invalidItem } from '../protocol/request-validation.js';
import { partitionKey, wavesOf } from '../protocol/topic-partitions.js';
import type { TopicPartition } from '../types.js';
import type { ClusterConnection } from './cluster-connection.js';
import { leaderMoved } from './retry-policy.js';
import { ResponseDecodeError } from './send-request.js';
import type { TopicMetadata } from './topic-metadata.js';

/** Outcome of one item of a per-leader request: an answer, the broker's error code, or a failure. */
export type ItemOutcome<A> = { ok: A } | { code: number } | { error: OffsetSyncError };

/** Sends one batch to its leader; the outcome of each item, by {@link partitionKey}. */
export type LeaderSend<Q, A> = (
  broker: InternalBroker,
  batch: readonly Q[],
) => Promise<Map<string, ItemOutcome<A>>>;

/** Routes partition-level requests to the partitions' leaders. */
export class LeaderRouter {
  constructor(
    private readonly connection: ClusterConnection,
    private readonly metadata: TopicMetadata,
  ) {}

  /**
   * Answers `items` in their order: invalid items get their error without being sent; repeats of a
   * partition go out in later waves (a request names a partition once); each wave is sent per leader and
   * its moved partitions retried once after a metadata refresh. `failed` turns an item's error into its
   * answer.
   */
  async perLeader<Q extends TopicPartition, A>(
    operation: string,
    items: readonly Q[],
    failed: (item: Q, error: OffsetSyncError) => A,
    send: LeaderSend<Q, A>,
  ): Promise<A[]> {
    const answers = new Array<A>(items.length);
    const runWave = async (wave: readonly number[]) => {
      let pending = wave.filter((i) => {
        const invalid = invalidItem(operation, items[i]!);
        if (invalid !== undefined) answers[i] = failed(items[i]!, invalid);
        return invalid === undefined;
      });
      for (const final of [false, true]) {
        if (pending.length === 0) return;
        const retry: number[] = [];
        const settle = (i: number, outcome: ItemOutcome<A>) => {
          const item = items[i]!;
          if ('ok' in outcome) answers[i] = outcome.ok;
          else if (!final && leaderMoved(outcome)) retry.push(i);
          else
            answers[i] = failed(
              item,
              'error' in outcome ? outcome.error : this.partitionError(outcome.code, operation, item),
            );
        };
        const routes = await this.metadata.leadersFor(
          pending.map((i) => items[i]!),
          { refresh: final },
        );
        const byLeader = new Map<number, number[]>();
        for (const i of pending) {
          const route = routes.get(partitionKey(items[i]!)) ?? -1;
          if (route instanceof OffsetSyncError) settle(i, { error: route });
          else if (route < 0) settle(i, { code: BrokerErrorCodes.LEADER_NOT_AVAILABLE });
          else byLeader.set(route, [...(byLeader.get(route) ?? []), i]);
        }
        await Promise.all(
          [...byLeader].map(async ([leader, indexes]) => {
            const batch = indexes.map((i) => items[i]!);
            const outcomes = await this.sendToLeader(operation, leader, batch, send);
            for (const i of indexes)
              settle(i, outcomes.get(partitionKey(items[i]!)) ?? noAnswer(operation, items[i]!));
          }),
        );
        for (const i of retry) this.metadata.forget(items[i]!.topic);
        pending = retry;
      }
    };
    await Promise.all(wavesOf(items).map(runWave));
    return answers;
  }

  /**
   * Sends one batch to a leader. A failure of the request becomes every item's outcome (unreachable
   * brokers are retried by the caller); a response that cannot be decoded is asked for again partition
   * by partition, so one bad partition does not cost the others their answers.
   */
  private async sendToLeader<Q extends TopicPartition, A>(
    operation: string,
    leader: number,
    batch: readonly Q[],
    send: LeaderSend<Q, A>,
  ): Promise<Map<string, ItemOutcome<A>>> {
    try {
      const broker = await this.connection.findBroker(leader);
      return await send(broker, batch);
    } catch (error: unknown) {
      if (error instanceof ResponseDecodeError && batch.length > 1) {
        const singles = await Promise.all(
          batch.map((item) => this.sendToLeader(operation, leader, [item], send)),
        );
        return new Map(singles.flatMap((m) => [...m]));
      }
      const mapped =
        error instanceof ResponseDecodeError
          ? new OffsetSyncError(`${operation}: ${error.message}`, {
              code: ErrorCodes.DECODE_ERROR,
              cause: error.cause,
              details: { nodeId: leader },
            })
          : toOffsetSyncError(error, { operation, details: { nodeId: leader } });
      return new Map(batch.map((item) => [partitionKey(item), { error: withDetails(mapped, item) }]));
    }
  }

  /** The error of a partition the broker answered with `code`, after the retries. */
  private partitionError(code: number, operation: string, item: TopicPartition): OffsetSyncError {
    if (code === BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION) {
      // Still unknown after the metadata refresh: the topic or partition is gone.
      const state = this.metadata.cached(item.topic);
      return missingError(
        item,
        state?.kind === 'present' ? ErrorCodes.PARTITION_MISSING : ErrorCodes.TOPIC_MISSING,
      );
    }
    return brokerError(code, operation, { topic: item.topic, partition: item.partition });
  }
}

function noAnswer(operation: string, item: TopicPartition): { error: OffsetSyncError } {
  return {
    error: new OffsetSyncError(
      `${operation}: the broker did not answer for ${item.topic}-${item.partition}`,
      {
        code: ErrorCodes.KAFKA_PROTOCOL,
        details: { topic: item.topic, partition: item.partition },
      },
    ),
  };
}

function withDetails(error: OffsetSyncError, item: TopicPartition): OffsetSyncError {
  return new OffsetSyncError(error.message, {
    code: error.code,
    retryable: error.retryable,
    cause: error.cause,
    details: { ...error.details, topic: item.topic, partition: item.partition },
  });
}
