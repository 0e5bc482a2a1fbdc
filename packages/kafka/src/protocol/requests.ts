// The requests the adapter sends, as the arguments kafkajs' request encoders take them
// (src/protocol/requests/<api>/v<n>/request.js), and which response shape each API answers with. Types and
// constants only: kafkajs encodes, network/send-request.ts sends.
import type { IsolationLevel } from '../types.js';
import type {
  DescribeGroupsResponse,
  FetchResponse,
  ListOffsetsResponse,
  MetadataResponse,
  OffsetCommitResponse,
  OffsetFetchResponse,
} from './responses.js';

/** Metadata for the named topics; an empty list would ask for every topic. */
export interface MetadataArgs {
  topics: string[];
  allowAutoTopicCreation: false;
}

/** ListOffsets as a consumer (replica -1) asks it. */
export interface ListOffsetsArgs {
  replicaId: -1;
  isolationLevel: number;
  topics: { topic: string; partitions: { partition: number; timestamp: number }[] }[];
}

/** Fetch as a consumer (replica -1) asks it; offsets are strings, as kafkajs' encoders take int64s. */
export interface FetchArgs {
  replicaId: -1;
  isolationLevel: number;
  maxWaitTime: number;
  minBytes: number;
  maxBytes: number;
  topics: {
    topic: string;
    /** currentLeaderEpoch -1: not checked by the leader. */
    partitions: { partition: number; currentLeaderEpoch: number; fetchOffset: string; maxBytes: number }[];
  }[];
  rackId: string;
}

/** OffsetCommit; generation -1 and an empty member id make it an admin commit that joins no group. */
export interface OffsetCommitArgs {
  groupId: string;
  groupGenerationId: number;
  memberId: string;
  retentionTime: number;
  topics: {
    topic: string;
    partitions: { partition: number; offset: string; metadata: string | null }[];
  }[];
}

/** OffsetFetch; an empty topic list is sent as null: every topic the group has committed. */
export interface OffsetFetchArgs {
  groupId: string;
  topics: [];
}

export interface DescribeGroupsArgs {
  groupIds: string[];
}

/** What each API the adapter uses takes and answers. */
export interface ApiShapes {
  Metadata: { args: MetadataArgs; response: MetadataResponse };
  ListOffsets: { args: ListOffsetsArgs; response: ListOffsetsResponse };
  Fetch: { args: FetchArgs; response: FetchResponse };
  OffsetCommit: { args: OffsetCommitArgs; response: OffsetCommitResponse };
  OffsetFetch: { args: OffsetFetchArgs; response: OffsetFetchResponse };
  DescribeGroups: { args: DescribeGroupsArgs; response: DescribeGroupsResponse };
}

/** The Kafka APIs the adapter sends itself (FindCoordinator and ApiVersions are kafkajs' own). */
export type ApiName = keyof ApiShapes;

/** The protocol's isolation level numbers. */
export const ISOLATION_CODES: Readonly<Record<IsolationLevel, number>> = {
  read_uncommitted: 0,
  read_committed: 1,
};
