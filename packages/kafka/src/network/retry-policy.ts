// The retry core: which broker answers mean "the partition's leader or the group's coordinator moved, look
// it up again and send once more", and how hard kafkajs itself retries the requests it makes for the
// adapter (connecting, metadata, FindCoordinator). Every other failure is the caller's answer at once;
// callers retry later with their own backoff, guided by the error's `retryable`.
import type { RetryOptions } from 'kafkajs';
import { ErrorCodes, type OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes } from '../kafka-errors.js';

/**
 * kafkajs' retries for the adapter's own client. It retries little: the adapter retries leader and
 * coordinator moves itself, and callers want a prompt KAFKA_UNREACHABLE rather than kafkajs' default of
 * about half a minute of retries.
 */
export const OWN_CLIENT_RETRY: Readonly<RetryOptions> = {
  retries: 2,
  initialRetryTime: 100,
  maxRetryTime: 1_000,
};

/** Error codes after which the partition's leader is looked up again and the request retried once. */
const LEADER_MOVED_CODES: ReadonlySet<number> = new Set([
  BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION,
  BrokerErrorCodes.LEADER_NOT_AVAILABLE,
  BrokerErrorCodes.NOT_LEADER_OR_FOLLOWER,
  BrokerErrorCodes.FENCED_LEADER_EPOCH,
  BrokerErrorCodes.UNKNOWN_LEADER_EPOCH,
]);

/** Error codes after which the group coordinator is looked up again and the request retried once. */
const COORDINATOR_MOVED_CODES: ReadonlySet<number> = new Set([
  BrokerErrorCodes.COORDINATOR_LOAD_IN_PROGRESS,
  BrokerErrorCodes.COORDINATOR_NOT_AVAILABLE,
  BrokerErrorCodes.NOT_COORDINATOR,
]);

/**
 * Whether a partition is worth another attempt after its leader was looked up again: the broker said it
 * is not (or no longer) the leader, or the broker could not be reached.
 */
export function leaderMoved(outcome: { code: number } | { error: OffsetSyncError }): boolean {
  return 'code' in outcome
    ? LEADER_MOVED_CODES.has(outcome.code)
    : outcome.error.code === ErrorCodes.KAFKA_UNREACHABLE;
}

/** Whether a group-level error code says the coordinator moved (or is still loading the group). */
export function coordinatorMoved(code: number): boolean {
  return COORDINATOR_MOVED_CODES.has(code);
}
