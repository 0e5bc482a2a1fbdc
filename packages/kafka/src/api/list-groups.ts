// ListGroups (v3-v5, encoded by protocol/list-groups.ts): the groups a broker coordinates, filtered by
// type and state. Every broker is asked for listGroups; describe-group.ts asks only the group's
// coordinator, which is the broker that lists it.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { toOffsetSyncError } from '../kafka-errors.js';
import { brokerError } from '../protocol/broker-errors.js';
import type { InternalBroker } from '../protocol/kafkajs-internals.js';
import { ListGroupsApi, type ListedGroup } from '../protocol/list-groups.js';
import { sendFlexibleRequest } from '../network/send-request.js';
import type { GroupFilter, GroupListing } from '../types.js';
import type { CallContext } from './call-context.js';

/** What one broker listed, and the group-level error code it answered with (0: none). */
export interface BrokerListing {
  /** The ListGroups version spoken: below 5 the broker does not say the type, below 4 not the state. */
  version: number;
  errorCode: number;
  groups: ListedGroup[];
}

/**
 * ListGroups at one broker. A filter the broker's version cannot apply (types below v5, states below v4)
 * rejects with `KAFKA_UNSUPPORTED` rather than listing more than was asked; so does a broker without
 * ListGroups v3.
 */
export async function listGroupsAt(broker: InternalBroker, filter: GroupFilter): Promise<BrokerListing> {
  const { version, response } = await sendFlexibleRequest(broker, ListGroupsApi, {
    statesFilter: filter.states ?? [],
    typesFilter: filter.types ?? [],
  });
  const needs = (filter.types?.length ?? 0) > 0 ? 5 : (filter.states?.length ?? 0) > 0 ? 4 : 3;
  if (version < needs) {
    throw new OffsetSyncError(
      `the broker speaks ListGroups v${version}, which cannot filter by group ${needs === 5 ? 'type' : 'state'}`,
      {
        code: ErrorCodes.KAFKA_UNSUPPORTED,
        retryable: false,
        details: { api: 'ListGroups', version },
      },
    );
  }
  return { version, errorCode: response.errorCode, groups: response.groups };
}

/** The groups of every broker that match `filter`, sorted by group id. */
export async function listGroups(context: CallContext, filter: GroupFilter): Promise<GroupListing[]> {
  await context.ready();
  const listings = await Promise.all(
    context.connection.nodeIds().map(async (nodeId) => {
      try {
        const listing = await listGroupsAt(await context.connection.findBroker(nodeId), filter);
        if (listing.errorCode !== 0) throw brokerError(listing.errorCode, 'listGroups', { nodeId });
        return listing;
      } catch (error: unknown) {
        throw toOffsetSyncError(error, { operation: 'listGroups', details: { nodeId } });
      }
    }),
  );
  const groups = listings.flatMap((listing) =>
    listing.groups.map((g) => ({
      groupId: g.groupId,
      // Below v5 the broker knows no other type.
      groupType: listing.version >= 5 ? g.groupType : 'classic',
      state: g.groupState,
      protocolType: g.protocolType,
    })),
  );
  return groups.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
}
