// Admin-style commits, as Java's `AdminClient.alterConsumerGroupOffsets` makes them: one OffsetCommit to
// the group coordinator with generation -1 and no member id, never joining the group.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes } from '../kafka-errors.js';
import { coordinatorMoved } from '../network/retry-policy.js';
import { sendRequest } from '../network/send-request.js';
import { brokerError } from '../protocol/broker-errors.js';
import { invalidItem } from '../protocol/request-validation.js';
import type { OffsetCommitArgs } from '../protocol/requests.js';
import { groupByTopic, partitionKey, wavesOf } from '../protocol/topic-partitions.js';
import type { CommitAnswer, CommitEntry } from '../types.js';
import type { CallContext } from './call-context.js';

/**
 * What the broker answers an admin-style commit (generation -1, no member id) for a group with live
 * members. Kafka 4.1 answers UNKNOWN_MEMBER_ID (25) for every partition, both for a stable classic group
 * (a kafkajs consumer) and for a KIP-848 consumer-protocol group (the Java console consumer with
 * group.protocol=consumer: its coordinator looks the empty member id up among the members and does not
 * find it); test/integration/kafka-adapter.test.ts checks both. REBALANCE_IN_PROGRESS (27, while a classic group completes a
 * rebalance) and ILLEGAL_GENERATION (22) likewise only occur when the group has members.
 */
const GROUP_ACTIVE_CODES: ReadonlySet<number> = new Set([
  BrokerErrorCodes.UNKNOWN_MEMBER_ID,
  BrokerErrorCodes.REBALANCE_IN_PROGRESS,
  BrokerErrorCodes.ILLEGAL_GENERATION,
]);

/**
 * Commits offsets for a group without joining it. A group with live members refuses: those answers
 * carry `GROUP_ACTIVE` (not retryable) and the committed offsets stay as they were. Answers come in
 * entry order; when a partition is named twice, the later entry is committed last.
 */
export async function commitOffsets(
  context: CallContext,
  groupId: string,
  entries: readonly CommitEntry[],
): Promise<CommitAnswer[]> {
  await context.ready();
  const answers: CommitAnswer[] = entries.map((e) => ({ topic: e.topic, partition: e.partition }));
  for (const wave of wavesOf(entries)) {
    const valid = wave.filter((i) => {
      const invalid = invalidItem('commitOffsets', entries[i]!);
      if (invalid !== undefined) answers[i] = { ...answers[i]!, error: invalid };
      return invalid === undefined;
    });
    if (valid.length > 0) await commitWave(context, groupId, entries, valid, answers);
  }
  return answers;
}

/** One wave of commitOffsets (no partition twice), retried once if the coordinator moved. */
async function commitWave(
  context: CallContext,
  groupId: string,
  entries: readonly CommitEntry[],
  wave: readonly number[],
  answers: CommitAnswer[],
): Promise<void> {
  const byKey = new Map(wave.map((i) => [partitionKey(entries[i]!), i]));
  const args = offsetCommitArgs(
    groupId,
    wave.map((i) => entries[i]!),
  );
  await context.coordinators.withCoordinator(groupId, 'commitOffsets', async (broker, final) => {
    const response = await sendRequest(broker, 'OffsetCommit', args);
    let moved = 0;
    for (const { topic, partitions } of response.responses) {
      for (const p of partitions) {
        const i = byKey.get(partitionKey({ topic, partition: p.partition }));
        if (i === undefined) continue;
        if (coordinatorMoved(p.errorCode)) moved = p.errorCode;
        answers[i] =
          p.errorCode === 0
            ? { topic, partition: p.partition }
            : { topic, partition: p.partition, error: commitError(p.errorCode, groupId, topic, p.partition) };
      }
    }
    // The answers carry every partition's error; only a moved coordinator is worth another attempt.
    return { result: undefined, code: final ? 0 : moved };
  });
}

/** The admin-style OffsetCommit of `entries` (no partition twice). */
function offsetCommitArgs(groupId: string, entries: readonly CommitEntry[]): OffsetCommitArgs {
  const topics = [...groupByTopic(entries)].map(([topic, items]) => ({
    topic,
    partitions: items.map((e) => ({
      partition: e.partition,
      offset: String(e.offset),
      metadata: e.metadata,
    })),
  }));
  return { groupId, groupGenerationId: -1, memberId: '', retentionTime: -1, topics };
}

/** A partition's commit error: `GROUP_ACTIVE` for the answers of a group with live members. */
function commitError(code: number, groupId: string, topic: string, partition: number): OffsetSyncError {
  const cause = brokerError(code, 'commitOffsets', { groupId, topic, partition });
  if (!GROUP_ACTIVE_CODES.has(code)) return cause;
  return new OffsetSyncError(`commit to group ${groupId} refused: the group has live members`, {
    code: ErrorCodes.GROUP_ACTIVE,
    retryable: false,
    cause,
    details: { ...cause.details },
  });
}
