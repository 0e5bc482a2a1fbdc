// A group's type, state and live members, asked the way its type needs, at its coordinator. A group of
// the KIP-848 consumer protocol (`group.protocol=consumer`) looks Dead to DescribeGroups (Kafka 4.1,
// seen against the test bed) and is described by ConsumerGroupDescribe; a classic group is unknown to
// ConsumerGroupDescribe (GROUP_ID_NOT_FOUND) and is described by DescribeGroups. A group that neither
// knows may still be of another type (share, streams): ListGroups, which names every group's type, says
// whether it exists at all.
import { ErrorCodes, OffsetSyncError, isOffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes } from '../kafka-errors.js';
import type { CoordinatorAttempt } from '../network/coordinator-lanes.js';
import { sendFlexibleRequest, sendRequest } from '../network/send-request.js';
import {
  ConsumerGroupDescribeApi,
  type AssignedTopic,
  type ConsumerGroupDescribeResponse,
} from '../protocol/consumer-group-describe.js';
import type { InternalBroker } from '../protocol/kafkajs-internals.js';
import type { DescribeGroupsResponse } from '../protocol/responses.js';
import type { GroupDescription, TopicPartition } from '../types.js';
import type { CallContext } from './call-context.js';
import { listGroupsAt } from './list-groups.js';

const NO_GROUP: GroupDescription = {
  groupType: 'none',
  state: 'Dead',
  protocolType: '',
  memberCount: 0,
  members: [],
};

/**
 * Type, state and live members of a group, for both group types; an unknown group is `Dead` with type
 * `none`. A group of another type (share, streams) rejects with `GROUP_TYPE_UNSUPPORTED`: whether it
 * has members is not known, so it must not pass for free.
 */
export async function describeGroup(context: CallContext, groupId: string): Promise<GroupDescription> {
  await context.ready();
  return context.coordinators.withCoordinator(groupId, 'describeGroup', async (broker) => {
    const consumer = await consumerGroup(broker, groupId);
    if (consumer !== undefined) return consumer;
    const classic = classicGroup(
      await sendRequest(broker, 'DescribeGroups', { groupIds: [groupId] }),
      groupId,
    );
    if (classic.code !== 0 || classic.result.state !== 'Dead') return classic;
    return otherGroup(broker, groupId);
  });
}

/**
 * The group as ConsumerGroupDescribe answers it, or undefined when it is no consumer-protocol group (or
 * the broker has no KIP-848 coordinator, so there are none).
 */
async function consumerGroup(
  broker: InternalBroker,
  groupId: string,
): Promise<CoordinatorAttempt<GroupDescription> | undefined> {
  let response: ConsumerGroupDescribeResponse;
  try {
    ({ response } = await sendFlexibleRequest(broker, ConsumerGroupDescribeApi, { groupIds: [groupId] }));
  } catch (error: unknown) {
    if (isOffsetSyncError(error) && error.code === ErrorCodes.KAFKA_UNSUPPORTED) return undefined;
    throw error;
  }
  const group = response.groups.find((g) => g.groupId === groupId) ?? response.groups[0];
  if (group === undefined) throw noAnswer(groupId);
  if (group.errorCode === BrokerErrorCodes.GROUP_ID_NOT_FOUND) return undefined;
  const members = group.members.map((m) => ({
    memberId: m.memberId,
    instanceId: m.instanceId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    assignment: partitionsOf(m.assignment),
  }));
  return {
    result: {
      groupType: 'consumer',
      state: group.groupState,
      protocolType: 'consumer',
      memberCount: members.length,
      members,
    },
    code: group.errorCode,
  };
}

/** The group as DescribeGroups answers it; an unknown group is Dead. */
function classicGroup(
  response: DescribeGroupsResponse,
  groupId: string,
): CoordinatorAttempt<GroupDescription> {
  const group = response.groups.find((g) => g.groupId === groupId) ?? response.groups[0];
  if (group === undefined) throw noAnswer(groupId);
  if (group.errorCode === BrokerErrorCodes.GROUP_ID_NOT_FOUND) return { result: NO_GROUP, code: 0 };
  const members = group.members.map((m) => ({
    memberId: m.memberId,
    instanceId: null,
    clientId: m.clientId,
    clientHost: m.clientHost,
  }));
  return {
    result: {
      groupType: group.state === 'Dead' ? 'none' : 'classic',
      state: group.state,
      protocolType: group.protocolType,
      memberCount: members.length,
      members,
    },
    code: group.errorCode,
  };
}

/**
 * A group that neither describe knows: absent from the coordinator's ListGroups it does not exist; listed,
 * it is of a type offsetsync cannot describe, or it changed type between the calls.
 */
async function otherGroup(
  broker: InternalBroker,
  groupId: string,
): Promise<CoordinatorAttempt<GroupDescription>> {
  let listing;
  try {
    listing = await listGroupsAt(broker, {});
  } catch (error: unknown) {
    // Without ListGroups v3 the broker predates group types: DescribeGroups saw every group there is.
    if (isOffsetSyncError(error) && error.code === ErrorCodes.KAFKA_UNSUPPORTED)
      return { result: NO_GROUP, code: 0 };
    throw error;
  }
  if (listing.errorCode !== 0) return { result: NO_GROUP, code: listing.errorCode };
  const listed = listing.groups.find((g) => g.groupId === groupId);
  if (listed === undefined || listed.groupState.toLowerCase() === 'dead')
    return { result: NO_GROUP, code: 0 };
  const details = { groupId, groupType: listed.groupType, state: listed.groupState };
  if (listed.groupType === 'classic' || listed.groupType === 'consumer') {
    throw new OffsetSyncError(
      `describeGroup: group ${groupId} changed while it was described (now a ${listed.groupType} group, ` +
        `${listed.groupState}); ask again`,
      { code: ErrorCodes.KAFKA_BROKER_ERROR, retryable: true, details },
    );
  }
  throw new OffsetSyncError(
    `describeGroup: group ${groupId} is a ${listed.groupType || 'untyped'} group (${listed.groupState}); ` +
      'offsetsync cannot tell whether it has live members',
    { code: ErrorCodes.GROUP_TYPE_UNSUPPORTED, retryable: false, details },
  );
}

function partitionsOf(assignment: readonly AssignedTopic[]): TopicPartition[] {
  return assignment
    .flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition })))
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
}

function noAnswer(groupId: string): OffsetSyncError {
  return new OffsetSyncError(`describeGroup: no answer for group ${groupId}`, {
    code: ErrorCodes.KAFKA_PROTOCOL,
    details: { groupId },
  });
}
