// What the calls of this layer run on: the adapter's readiness and the network layer's routing.
import type { ClusterConnection } from '../network/cluster-connection.js';
import type { CoordinatorLanes } from '../network/coordinator-lanes.js';
import type { LeaderRouter } from '../network/leader-routing.js';
import type { TopicMetadata } from '../network/topic-metadata.js';

/** The adapter's connection state and routing, as the calls use them. */
export interface CallContext {
  /** Connects on first use; rejects with `LIFECYCLE` once the adapter was disconnected. */
  ready(): Promise<void>;
  /** The adapter's own connection: its brokers, for requests every broker answers. */
  connection: ClusterConnection;
  /** Partition leaders and topic existence. */
  metadata: TopicMetadata;
  /** Partition-level requests, one per leader broker. */
  leaders: LeaderRouter;
  /** Group-level requests, to the group's coordinator. */
  coordinators: CoordinatorLanes;
}
