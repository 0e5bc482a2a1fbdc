// A group's state, protocol type and member count, from DescribeGroups at its coordinator.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes } from '../kafka-errors.js';
import type { CoordinatorAttempt } from '../network/coordinator-lanes.js';
import { sendRequest } from '../network/send-request.js';
import type { DescribeGroupsResponse } from '../protocol/responses.js';
import type { GroupDescription } from '../types.js';
import type { CallContext } from './call-context.js';

/**
 * State, protocol type and member count of a group; an unknown group is `Dead`.
 *
 * Only groups of the classic protocol are visible this way: for a group of the KIP-848 consumer
 * protocol (`group.protocol=consumer`) Kafka 4.1 answers `Dead` even while it has members (seen against
 * the test bed). Do not decide that a group is free from this; commitOffsets is refused for live groups
 * of both protocols.
 */
export async function describeGroup(context: CallContext, groupId: string): Promise<GroupDescription> {
  await context.ready();
  return context.coordinators.withCoordinator(groupId, 'describeGroup', async (broker) =>
    groupDescription(await sendRequest(broker, 'DescribeGroups', { groupIds: [groupId] }), groupId),
  );
}

/** The group's description and the group-level error code of a DescribeGroups response. */
function groupDescription(
  response: DescribeGroupsResponse,
  groupId: string,
): CoordinatorAttempt<GroupDescription> {
  const group = response.groups.find((g) => g.groupId === groupId) ?? response.groups[0];
  if (group === undefined) {
    throw new OffsetSyncError(`describeGroup: no answer for group ${groupId}`, {
      code: ErrorCodes.KAFKA_PROTOCOL,
      details: { groupId },
    });
  }
  if (group.errorCode === BrokerErrorCodes.GROUP_ID_NOT_FOUND) {
    return { result: { state: 'Dead', protocolType: '', memberCount: 0 }, code: 0 };
  }
  return {
    result: { state: group.state, protocolType: group.protocolType, memberCount: group.members.length },
    code: group.errorCode,
  };
}
