// What a failed Kafka call means for the events it carried: wait for the group to become empty, retry
// later, or report the failure and move on. Pure.
import { ErrorCodes, isOffsetSyncError, type OffsetSyncError } from '@offsetsync/contracts';

export type CommitResult =
  /** The target stored the offset. */
  | { kind: 'committed' }
  /** The group has live members on the target; the broker refuses commits from outside the group. */
  | { kind: 'active' }
  /** A transient failure (target unreachable, coordinator moving): try the event again later. */
  | { kind: 'retry'; error: OffsetSyncError }
  /** The target refused for good (unknown topic, authorization...): report it; `detail` names the code. */
  | { kind: 'failed'; detail: string };

/** Classifies one partition's answer to OffsetCommit (`undefined`: no error). */
export function classifyCommitError(error: OffsetSyncError | undefined): CommitResult {
  if (error === undefined) return { kind: 'committed' };
  if (error.code === ErrorCodes.GROUP_ACTIVE) return { kind: 'active' };
  return classifyFailure(error);
}

/** Classifies an error thrown by a Kafka call that concerned a whole group. */
export function classifyFailure(error: unknown): Exclude<CommitResult, { kind: 'committed' }> {
  if (isOffsetSyncError(error)) {
    if (error.code === ErrorCodes.GROUP_ACTIVE) return { kind: 'active' };
    if (error.retryable) return { kind: 'retry', error };
  }
  return { kind: 'failed', detail: failureDetail(error) };
}

/** `<code> [<broker error> (<broker code>)]: <message>`, for the event's detail and logs. */
export function failureDetail(error: unknown): string {
  if (!isOffsetSyncError(error))
    return `${ErrorCodes.INTERNAL}: ${error instanceof Error ? error.message : String(error)}`;
  const brokerError = error.details?.brokerError;
  const brokerCode = error.details?.brokerCode;
  const broker =
    typeof brokerError === 'string'
      ? ` ${brokerError}${typeof brokerCode === 'number' ? ` (${brokerCode})` : ''}`
      : '';
  return `${error.code}${broker}: ${error.message}`;
}
